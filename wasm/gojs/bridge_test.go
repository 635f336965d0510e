package gojs_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/wasm/gojs"
)

// hostGlobals are the host functions the bridge scenario calls through
// callHost, catch and nested.
func hostGlobals() map[string]any {
	return map[string]any{
		"hostAdd": gojs.Func(func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
			return args[0].(float64) + args[1].(float64), nil
		}),
		"hostEcho": gojs.Func(func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
			return args[0], nil
		}),
		// hostDown(n, f) calls the Go function f(n-1) while the module is
		// inside its call to hostDown: a nested resume.
		"hostDown": gojs.Func(func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
			return args[1].(*gojs.Function).Call(nil, args[0].(float64)-1)
		}),
		// hostInvoke(f, args...) calls the Go function f with args.
		"hostInvoke": gojs.Func(func(_ gojs.Value, args []gojs.Value) (gojs.Value, error) {
			rest := make([]any, len(args)-1)
			for i, a := range args[1:] {
				rest[i] = a
			}
			return args[0].(*gojs.Function).Call(nil, rest...)
		}),
		"hostThrow": gojs.Func(func(gojs.Value, []gojs.Value) (gojs.Value, error) {
			e := gojs.NewError("boom")
			e.Set("code", "EXAMPLE")
			return nil, &gojs.Exception{Value: e}
		}),
		"hostFail": gojs.Func(func(gojs.Value, []gojs.Value) (gojs.Value, error) {
			return nil, errors.New("plain failure")
		}),
		"hostPanic": gojs.Func(func(gojs.Value, []gojs.Value) (gojs.Value, error) {
			panic("host bug")
		}),
	}
}

type bridgeInstance struct {
	*gojs.Instance
	tb             testing.TB
	obj            *gojs.Object
	stdout, stderr *syncbuf.Buffer
}

// startBridge starts the bridge scenario with the host functions above.
func startBridge(tb testing.TB) *bridgeInstance {
	tb.Helper()
	b := &bridgeInstance{tb: tb, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}}
	b.Instance = start(tb, gojs.Config{
		Args:    []string{"module", "bridge"},
		Stdout:  b.stdout,
		Stderr:  b.stderr,
		Globals: hostGlobals(),
	})
	v, err := b.Get("__plingBridge")
	if err != nil {
		tb.Fatal(err)
	}
	obj, ok := v.(*gojs.Object)
	if !ok {
		tb.Fatalf("__plingBridge = %#v; want an object (stderr: %s)", v, b.stderr)
	}
	b.obj = obj
	if got := b.stdout.String(); got != "ready\n" {
		tb.Fatalf("stdout after start = %q; want %q", got, "ready\n")
	}
	return b
}

func (b *bridgeInstance) fn(name string) *gojs.Function {
	f, ok := b.obj.Get(name).(*gojs.Function)
	if !ok || !f.IsGo() {
		b.tb.Fatalf("__plingBridge.%s is %#v; want a Go function", name, b.obj.Get(name))
	}
	return f
}

// call calls __plingBridge[name](args...) with the bridge as this.
func (b *bridgeInstance) call(name string, args ...any) gojs.Value {
	b.tb.Helper()
	v, err := b.Call(context.Background(), b.fn(name), b.obj, args...)
	if err != nil {
		b.tb.Fatalf("%s(%v): %v\nstderr: %s", name, args, err, b.stderr)
	}
	return v
}

func TestBridgeValues(t *testing.T) {
	b := startBridge(t)
	obj := gojs.NewObject(map[string]any{"name": "gopher", "n": 7, "ok": true, "tags": []any{"a", "b"}})
	arr := gojs.NewArray(1, "x")
	u8 := gojs.NewUint8Array([]byte{1, 2, 3})
	errObj := gojs.NewError("bad")

	tests := []struct {
		name string
		fn   string
		args []any
		want any // compared with plain()
	}{
		{"echo string", "echo", []any{"héllo, 世界"}, "héllo, 世界"},
		{"echo empty string", "echo", []any{""}, ""},
		{"echo number", "echo", []any{42.5}, 42.5},
		{"echo int", "echo", []any{-3}, -3.0},
		{"echo zero", "echo", []any{0}, 0.0},
		{"echo true", "echo", []any{true}, true},
		{"echo false", "echo", []any{false}, false},
		{"echo null", "echo", []any{gojs.Null}, "<null>"},
		{"echo undefined", "echo", []any{nil}, nil},
		{"echo array", "echo", []any{arr}, []any{1.0, "x"}},
		{"typeof string", "typeof", []any{"s"}, "string"},
		{"typeof number", "typeof", []any{1}, "number"},
		{"typeof zero", "typeof", []any{0}, "number"},
		{"typeof bool", "typeof", []any{true}, "boolean"},
		{"typeof null", "typeof", []any{gojs.Null}, "null"},
		{"typeof undefined", "typeof", []any{nil}, "undefined"},
		{"typeof object", "typeof", []any{obj}, "object"},
		{"typeof function", "typeof", []any{b.fn("echo")}, "function"},
		{"concat", "concat", []any{"foo", "bar"}, "foobar"},
		{"concat non-strings", "concat", []any{1.5, true}, "<number: 1.5><boolean: true>"},
		{"add", "add", []any{2, 0.5}, 2.5},
		{"add to zero", "add", []any{-1, 1}, 0.0},
		{"unicode", "unicode", []any{"héllo"}, "6:HÉLLO"},
		{"describe object", "describe", []any{obj}, map[string]any{
			"name": "gopher", "n": 7.0, "tags": 2.0, "first": "a", "ok": true,
			"kind": "object", "nil": true, "list": []any{1.0, "two", "<null>", true},
		}},
		{"instanceof object", "instanceof", []any{obj}, []any{true, false, false, false, false}},
		{"instanceof array", "instanceof", []any{arr}, []any{true, true, false, false, false}},
		{"instanceof Uint8Array", "instanceof", []any{u8}, []any{true, false, true, false, false}},
		{"instanceof Error", "instanceof", []any{errObj}, []any{true, false, false, false, true}},
		{"instanceof string", "instanceof", []any{"s"}, []any{false, false, false, false, false}},
		{"JSON through the module", "json", []any{`{"a":1,"b":[true,null,"x\u00e9"],"c":{"d":1.5e-7}}`},
			`{"a":1,"b":[true,null,"xé"],"c":{"d":1.5e-7},"seen":true}`},
		{"selfcall: Go invokes its own js.Func", "selfcall", []any{41}, 42.0},
		{"callHost", "callHost", []any{"hostAdd", 2, 3}, 5.0},
		{"callHost echo object", "callHost", []any{"hostEcho", arr}, []any{1.0, "x"}},
		{"reverse bytes", "reverse", []any{gojs.NewUint8Array([]byte("hello"))}, []byte("olleh")},
		{"reverse empty", "reverse", []any{gojs.NewUint8Array(nil)}, []byte{}},
		{"nested resume", "nested", []any{5}, "5>4>3>2>1>bottom"},
		{"catch thrown Error", "catch", []any{"hostThrow"}, "JavaScript error: boom|EXAMPLE"},
		{"catch Go error", "catch", []any{"hostFail"}, "JavaScript error: plain failure|<undefined>"},
		{"catch missing function", "catch", []any{"hostMissing"},
			"not a js.Error: syscall/js: Value.Call: property hostMissing is not a function, got undefined"},
		{"fs error is ENOSYS", "fsError", nil, "open /nonexistent: not implemented on js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plain(b.call(tt.fn, tt.args...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s(%v) mismatch (-want +got):\n%s", tt.fn, tt.args, diff)
			}
		})
	}

	t.Run("identity survives the round trip", func(t *testing.T) {
		for _, v := range []gojs.Value{obj, arr, u8, errObj, b.fn("add")} {
			if got := b.call("echo", v); got != v {
				t.Errorf("echo(%T) returned a different value %p", v, got)
			}
		}
		if got := b.call("this"); got != gojs.Value(b.obj) {
			t.Errorf("this = %#v; want the bridge object", got)
		}
	})
	t.Run("NaN", func(t *testing.T) {
		if got, ok := b.call("echo", math.NaN()).(float64); !ok || !math.IsNaN(got) {
			t.Errorf("echo(NaN) = %#v", got)
		}
	})
	t.Run("host catches a panic as a thrown Error", func(t *testing.T) {
		got, _ := b.call("catch", "hostPanic").(string)
		if !strings.HasPrefix(got, `JavaScript error: gojs: host function "" panicked: host bug`) {
			t.Errorf("catch(hostPanic) = %q", got)
		}
	})
}

// TestManyCalls: the host calls the module's functions many times with
// strings, numbers and objects and reads every result.
func TestManyCalls(t *testing.T) {
	b := startBridge(t)
	for i := range 2000 {
		s := strings.Repeat("x", i%50)
		if got := b.call("concat", s, "!"); got != s+"!" {
			t.Fatalf("call %d: concat = %#v", i, got)
		}
		if got := b.call("add", i, 0.5); got != float64(i)+0.5 {
			t.Fatalf("call %d: add = %#v", i, got)
		}
		o := gojs.NewObject(map[string]any{"name": s, "n": i, "tags": []any{"t"}, "ok": i%2 == 0})
		d, ok := b.call("describe", o).(*gojs.Object)
		if !ok || d.Get("name") != s || d.Get("n") != float64(i) || d.Get("ok") != (i%2 == 0) {
			t.Fatalf("call %d: describe = %#v", i, plain(d))
		}
	}
}

// TestNestedResumeDepth: Go → host → Go → host … twenty levels deep; each
// level grows its goroutine stack, so each must re-read sp.
func TestNestedResumeDepth(t *testing.T) {
	b := startBridge(t)
	want := "20>19>18>17>16>15>14>13>12>11>10>9>8>7>6>5>4>3>2>1>bottom"
	for range 3 {
		if got := b.call("nested", 20); got != want {
			t.Fatalf("nested(20) = %#v; want %q", got, want)
		}
	}
	// The host calls a Go function directly from a host function the
	// module is calling, with arguments.
	if got := b.call("callHost", "hostInvoke", b.fn("concat"), "a", "b"); got != "ab" {
		t.Fatalf("hostInvoke(concat, a, b) = %#v", got)
	}
}

// TestPrintInCallback: fmt.Println inside a js.Func re-enters Go through
// fs.write's callback while Go is inside the host's call.
func TestPrintInCallback(t *testing.T) {
	b := startBridge(t)
	for i := range 100 {
		if got := b.call("print", "from callback"); got != float64(len("from callback")) {
			t.Fatalf("call %d: print = %#v", i, got)
		}
	}
	want := "ready\n" + strings.Repeat("from callback\n", 100)
	if got := b.stdout.String(); got != want {
		t.Fatalf("stdout = %q; want %q", got, want)
	}
}

// TestRandom: crypto/rand in the module goes through runtime.getRandomData.
func TestRandom(t *testing.T) {
	b := startBridge(t)
	x, _ := b.call("random", 32).(string)
	y, _ := b.call("random", 32).(string)
	if len(x) != 64 || len(y) != 64 || x == y || x == strings.Repeat("0", 64) {
		t.Fatalf("random(32) = %q, %q; want two different 64-digit hex strings", x, y)
	}
}

// TestTimersAfterCall: a goroutine the call started sleeps; Call returns
// when it has finished, because it fires timers until none is pending.
func TestTimersAfterCall(t *testing.T) {
	b := startBridge(t)
	b.call("later", 15)
	if got, _ := b.Get("laterDone"); got != true {
		t.Fatalf("laterDone = %#v after Call; want true", got)
	}

	// With a context that ends first, Call returns the result and says the
	// module is not idle; RunUntilIdle finishes the work.
	b.Global().Delete("laterDone")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	res, err := b.Call(ctx, b.fn("later"), b.obj, 200)
	if !errors.Is(err, context.DeadlineExceeded) || res != gojs.Null { // later returns nil: null in JavaScript
		t.Fatalf("Call with short deadline = %#v, %v; want null, DeadlineExceeded", res, err)
	}
	if got, _ := b.Get("laterDone"); got != nil {
		t.Fatalf("laterDone = %#v before the timer; want undefined", got)
	}
	if err := b.RunUntilIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get("laterDone"); got != true {
		t.Fatalf("laterDone = %#v after RunUntilIdle; want true", got)
	}
}

// TestExitInCallback: a panic or os.Exit inside a js.Func ends the module;
// the call reports the exit and the instance refuses further calls.
func TestExitInCallback(t *testing.T) {
	tests := []struct {
		name   string
		call   func(b *bridgeInstance) (gojs.Value, error)
		code   int
		stderr string
	}{
		{
			name: "panic",
			call: func(b *bridgeInstance) (gojs.Value, error) {
				return b.Call(context.Background(), b.fn("panic"), nil)
			},
			code:   2,
			stderr: "panic: callback boom",
		},
		{
			name: "os.Exit",
			call: func(b *bridgeInstance) (gojs.Value, error) {
				return b.Call(context.Background(), b.fn("exit"), nil, 7)
			},
			code: 7,
		},
		{
			name: "os.Exit in a nested call",
			call: func(b *bridgeInstance) (gojs.Value, error) {
				// callHost → hostInvoke → exit(9): the module exits two
				// resumes deep and the outer frames must unwind.
				return b.Call(context.Background(), b.fn("callHost"), nil, "hostInvoke", b.fn("exit"), 9)
			},
			code: 9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := startBridge(t)
			_, err := tt.call(b)
			var exit *gojs.ExitError
			if !errors.As(err, &exit) || exit.Code != tt.code {
				t.Fatalf("err = %v; want ExitError{%d}", err, tt.code)
			}
			if code, exited := b.Exited(); !exited || code != tt.code {
				t.Fatalf("Exited() = %d, %v", code, exited)
			}
			if !strings.Contains(b.stderr.String(), tt.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.stderr, b.stderr)
			}
			if _, err := b.Call(context.Background(), b.fn("echo"), nil, 1); !errors.Is(err, gojs.ErrExited) {
				t.Fatalf("Call after exit: %v", err)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	b := startBridge(t)
	ctx := context.Background()
	if _, err := b.Call(ctx, "not a function", nil); err == nil {
		t.Error("Call of a string: no error")
	}
	if _, err := b.Call(ctx, b.fn("echo"), nil, make(chan int)); err == nil {
		t.Error("Call with a chan argument: no error")
	}
	// A host function called from the host returns its own error.
	boom := gojs.NewFunc("boom", func(gojs.Value, []gojs.Value) (gojs.Value, error) {
		return nil, errors.New("host says no")
	})
	if _, err := b.Call(ctx, boom, nil); err == nil || err.Error() != "host says no" {
		t.Errorf("Call(host func) err = %v", err)
	}
	// A Go function of another instance is refused.
	other := startBridge(t)
	if _, err := b.Call(ctx, other.fn("echo"), nil, 1); err == nil {
		t.Error("Call of another instance's function: no error")
	}
	// Function.Call of a Go function outside a call is refused.
	if _, err := b.fn("echo").Call(nil, 1); err == nil {
		t.Error("Function.Call outside a call: no error")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Call(canceled, b.fn("echo"), nil, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a canceled context: err = %v; want context.Canceled", err)
	}
	if _, err := b.Get("nope", "deeper"); err == nil {
		t.Error("Get through undefined: no error")
	}
	if v, err := b.Get("nope"); v != nil || err != nil {
		t.Errorf("Get(nope) = %#v, %v; want undefined, nil", v, err)
	}
	// The instance still works.
	if got := b.call("add", 1, 1); got != 2.0 {
		t.Errorf("add after errors = %#v", got)
	}
}
