package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/hammer"
	"github.com/pling-go/pling/schema"
)

// TestRegistryHammer releases 64 goroutines together: some declare and
// dispose identical declarations (StrictMode), some conflicting ones, some
// row actions and states, while the rest describe and invoke through
// Handle. Run it with -race. Afterwards every handle is disposed and the
// registry must be exactly as it was.
func TestRegistryHammer(t *testing.T) {
	const goroutines = 64
	rounds := 60
	if testing.Short() {
		rounds = 10
	}
	e := newEnv(t)
	count := newVar(0)
	if _, err := e.rt.DeclareState(State{Key: "cart.count", Read: func(context.Context) (any, error) { return count.get(), nil }}); err != nil {
		t.Fatal(err)
	}
	orderRecords(t, e.rt, 5, 5)
	var baseRuns atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add", Run: func(context.Context, *Call) (any, error) {
		baseRuns.Add(1)
		count.add(1)
		return "base", nil
	}})
	mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}})
	wantBytes := e.describeBytes()
	wantSize := registrySize(e.rt.reg)

	same := func(tag string) Action {
		return Action{ID: "cart.add", Title: "Add", Run: func(context.Context, *Call) (any, error) { count.add(1); return tag, nil }}
	}
	other := func(g int) Action {
		return Action{ID: "cart.add", Title: fmt.Sprintf("Add v%d", g), Run: func(context.Context, *Call) (any, error) { return "conflict", nil }}
	}

	errs := make(chan string, goroutines*rounds)
	hammer.Run(goroutines, func(g int) {
		for i := range rounds {
			switch g % 8 {
			case 0, 1: // identical declarations, disposed in any order
				h1, err1 := e.rt.DeclareAction(same(fmt.Sprintf("g%d", g)))
				h2, err2 := e.rt.DeclareAction(same(fmt.Sprintf("g%d'", g)))
				for _, err := range []error{err1, err2} {
					if err != nil && perrCodeOf(err) != perr.DuplicateActionID {
						errs <- fmt.Sprintf("identical declaration: %v", err)
					}
				}
				if i%2 == 0 {
					h1.Dispose()
					h2.Dispose()
				} else {
					h2.Dispose()
					h1.Dispose()
				}
				h1.Dispose()
			case 2: // a different declaration under the same id
				h, err := e.rt.DeclareAction(other(g))
				if h == nil || perrCodeOf(err) != perr.DuplicateActionID {
					errs <- fmt.Sprintf("conflicting declaration: %v, %v", h, err)
				}
				h.Dispose()
			case 3: // row actions, a template, states, guides, hooks
				hr, err := e.rt.DeclareAction(Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order", ID: fmt.Sprintf("ord_%d", i%7)}})
				if err != nil {
					errs <- fmt.Sprintf("row declaration: %v", err)
				}
				hs, err := e.rt.DeclareState(State{Key: fmt.Sprintf("s%d", i%3), Read: func(context.Context) (any, error) { return i, nil }})
				if err != nil {
					errs <- fmt.Sprintf("state: %v", err)
				}
				hg, _ := e.rt.DeclareGuide(Guide{Target: "checkout", Label: fmt.Sprintf("L%d", i%2)})
				hk, _ := e.rt.AddHook(Hook{After: func(context.Context, *Call, any) {}})
				hreg, _ := e.rt.DeclareRegion(Region{ID: "orders"})
				hr.Dispose()
				hs.Dispose()
				hg.Dispose()
				hk.Dispose()
				hreg.Dispose()
			case 4, 5: // describe
				out := e.rt.Handle(context.Background(), mustJSON(e.describeReq()))
				var resp schema.SurfaceResponse
				if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
					errs <- fmt.Sprintf("describe: %s", out)
				}
			default: // invoke
				cap, input := "cart.add", map[string]any(nil)
				if i%3 == 0 {
					cap, input = "approve@order", map[string]any{"record": fmt.Sprintf("ord_%d", 1+i%4)}
				}
				out := e.rt.Handle(context.Background(), mustJSON(e.invokeReq(cap, input)))
				var resp schema.SurfaceResponse
				if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
					errs <- fmt.Sprintf("invoke: %s", out)
					continue
				}
				var res schema.SurfaceInvokeResult
				if err := json.Unmarshal(resp.Result, &res); err != nil {
					errs <- fmt.Sprintf("invoke result: %s", out)
					continue
				}
				if res.Error != nil {
					switch perr.Code(res.Error.Code) {
					case perr.DuplicateActionID, perr.ActionNotFound, perr.LoopDetected:
					default:
						errs <- fmt.Sprintf("invoke %s: %s", cap, out)
					}
				} else if res.Value == "conflict" {
					errs <- "a conflicting declaration's handler ran"
				}
			}
		}
	})
	close(errs)
	n := 0
	for msg := range errs {
		if n++; n <= 10 {
			t.Error(msg)
		}
	}
	if n > 10 {
		t.Errorf("… and %d more", n-10)
	}

	if got := registrySize(e.rt.reg); got != wantSize {
		t.Errorf("registry holds %d instances after every handle was disposed, want %d", got, wantSize)
	}
	if got := e.describeBytes(); got != wantBytes {
		// States change with the invokes; compare without them.
		var want, have schema.SurfaceDescription
		_ = json.Unmarshal([]byte(wantBytes), &want)
		_ = json.Unmarshal([]byte(got), &have)
		want.Context.States, have.Context.States = nil, nil
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("the registry is not as before (-want +got):\n%s", diff)
		}
	}
	r := e.rt.reg
	r.mu.RLock()
	defer r.mu.RUnlock()
	if s := r.actions["cart.add"]; s == nil || len(s.insts) != 1 || s.conflict() {
		t.Errorf("cart.add slot = %+v, want the one base declaration", s)
	}
	if len(r.states) != 1 || len(r.guides) != 0 || len(r.regions) != 0 || len(r.hooks) != 0 {
		t.Errorf("left over: %d states, %d guides, %d regions, %d hooks", len(r.states), len(r.guides), len(r.regions), len(r.hooks))
	}
	if f := r.folds["approve@order"]; f == nil || len(f.rows) != 0 || len(f.template.insts) != 1 {
		t.Errorf("fold = %+v, want only the template", f)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func perrCodeOf(err error) perr.Code {
	if pe, ok := err.(*perr.Error); ok {
		return pe.Code()
	}
	return ""
}
