package gojs_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pling-go/pling/wasm/gojs"
)

// TestInstancesInParallel runs instances of one compiled module on several
// goroutines at once, released together; each sees only its own calls and
// output.
func TestInstancesInParallel(t *testing.T) {
	const instances, calls = 4, 300
	bs := make([]*bridgeInstance, instances)
	for n := range bs {
		bs[n] = startBridge(t)
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, instances)
	for n, b := range bs {
		wg.Go(func() {
			<-release
			for i := range calls {
				line := fmt.Sprintf("instance %d call %d", n, i)
				v, err := b.Call(context.Background(), b.fn("print"), nil, line)
				if err != nil || v != float64(len(line)) {
					errs <- fmt.Errorf("instance %d call %d: print = %#v, %v", n, i, v, err)
					return
				}
				o := gojs.NewObject(map[string]any{"name": line, "n": i, "tags": []any{}, "ok": true})
				v, err = b.Call(context.Background(), b.fn("describe"), nil, o)
				if d, ok := v.(*gojs.Object); err != nil || !ok || d.Get("name") != line {
					errs <- fmt.Errorf("instance %d call %d: describe = %#v, %v", n, i, v, err)
					return
				}
			}
			if _, err := b.Call(context.Background(), b.fn("later"), nil, 2); err != nil {
				errs <- err
			}
		})
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for n, b := range bs {
		var want strings.Builder
		want.WriteString("ready\n")
		for i := range calls {
			fmt.Fprintf(&want, "instance %d call %d\n", n, i)
		}
		if got := b.stdout.String(); got != want.String() {
			t.Errorf("instance %d: stdout has %d bytes, want %d (output mixed or lost)", n, len(got), want.Len())
		}
	}
}

// TestInstanceSerializesCalls hammers one instance from many goroutines:
// the instance's lock makes them take turns, and every call gets its own
// answer.
func TestInstanceSerializesCalls(t *testing.T) {
	const goroutines, calls = 8, 200
	b := startBridge(t)
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			<-release
			for i := range calls {
				want := fmt.Sprintf("g%d-%d", g, i)
				v, err := b.Call(context.Background(), b.fn("concat"), nil, fmt.Sprintf("g%d-", g), fmt.Sprint(i))
				if err != nil || v != want {
					errs <- fmt.Errorf("goroutine %d call %d: concat = %#v, %v", g, i, v, err)
					return
				}
				if i%50 == 0 {
					if _, err := b.Get("__plingBridge", "echo"); err != nil {
						errs <- err
						return
					}
					_ = b.ValueTableSize()
					if err := b.RunUntilIdle(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := b.call("nested", 3); got != "3>2>1>bottom" {
		t.Errorf("nested after the hammer = %#v", got)
	}
}
