//go:build js && wasm

package main

// The bridge scenario publishes globalThis.__plingBridge, an object of
// js.FuncOf functions the tests call from the host, then blocks in
// select{}. It uses syscall/js directly: it tests the ABI that safejs is
// built on.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall/js"
	"time"

	"github.com/pling-go/pling/wasm/gojs/testdata/benchfn"
)

var global = js.Global()

func bridge() {
	b := global.Get("Object").New()
	fn := func(name string, f func(this js.Value, args []js.Value) any) {
		b.Set(name, js.FuncOf(f))
	}

	// Values in and out.
	fn("echo", func(_ js.Value, args []js.Value) any { return args[0] })
	fn("typeof", func(_ js.Value, args []js.Value) any { return args[0].Type().String() })
	fn("concat", func(_ js.Value, args []js.Value) any { return args[0].String() + args[1].String() })
	fn("add", func(_ js.Value, args []js.Value) any { return args[0].Float() + args[1].Float() })
	fn("this", func(this js.Value, _ []js.Value) any { return this })
	fn("describe", func(_ js.Value, args []js.Value) any {
		o := args[0]
		return map[string]any{
			"name":  o.Get("name").String(),
			"n":     o.Get("n").Int(),
			"tags":  o.Get("tags").Length(),
			"first": o.Get("tags").Index(0),
			"ok":    o.Get("ok").Bool(),
			"kind":  o.Type().String(),
			"nil":   o.Get("missing").IsUndefined(),
			"list":  []any{1, "two", nil, true},
		}
	})
	fn("instanceof", func(_ js.Value, args []js.Value) any {
		var out []any
		for _, c := range []string{"Object", "Array", "Uint8Array", "Date", "Error"} {
			out = append(out, args[0].InstanceOf(global.Get(c)))
		}
		return out
	})
	fn("json", func(_ js.Value, args []js.Value) any {
		j := global.Get("JSON")
		v := j.Call("parse", args[0])
		v.Set("seen", true)
		return j.Call("stringify", v)
	})
	fn("unicode", func(_ js.Value, args []js.Value) any {
		s := args[0].String()
		return fmt.Sprintf("%d:%s", len(s), strings.ToUpper(s))
	})

	// Calls from Go into host functions, and back into Go.
	fn("callHost", func(_ js.Value, args []js.Value) any {
		rest := make([]any, len(args)-1)
		for k := range rest {
			rest[k] = args[k+1]
		}
		return global.Call(args[0].String(), rest...)
	})
	var nested js.Func
	nested = js.FuncOf(func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		growStack(64) // move the goroutine stack: the host must re-read sp
		if n == 0 {
			return "bottom"
		}
		// hostDown(n, f) calls f(n-1) from the host: a resume nested in
		// this valueCall.
		return fmt.Sprintf("%d>%s", n, global.Call("hostDown", n, nested).String())
	})
	b.Set("nested", nested)
	fn("selfcall", func(_ js.Value, args []js.Value) any {
		return b.Get("add").Invoke(args[0], 1) // Go calling its own js.Func
	})
	fn("print", func(_ js.Value, args []js.Value) any {
		fmt.Println(args[0].String()) // fs.write's callback re-enters Go
		return len(args[0].String())
	})
	fn("catch", func(_ js.Value, args []js.Value) (out any) {
		defer func() {
			r := recover()
			jsErr, ok := r.(js.Error)
			if !ok {
				out = fmt.Sprintf("not a js.Error: %v", r)
				return
			}
			out = jsErr.Error() + "|" + jsErr.Get("code").String()
		}()
		global.Call(args[0].String())
		return "no exception"
	})
	fn("fsError", func(_ js.Value, _ []js.Value) any {
		_, err := os.Open("/nonexistent")
		return err.Error()
	})

	// Bytes.
	fn("reverse", func(_ js.Value, args []js.Value) any {
		buf := make([]byte, args[0].Length())
		n := js.CopyBytesToGo(buf, args[0])
		for l, r := 0, n-1; l < r; l, r = l+1, r-1 {
			buf[l], buf[r] = buf[r], buf[l]
		}
		out := global.Get("Uint8Array").New(n)
		js.CopyBytesToJS(out, buf[:n])
		return out
	})
	fn("random", func(_ js.Value, args []js.Value) any {
		buf := make([]byte, args[0].Int())
		if _, err := rand.Read(buf); err != nil {
			return err.Error()
		}
		return hex.EncodeToString(buf)
	})

	// Runtime.
	fn("gc", func(_ js.Value, _ []js.Value) any {
		runtime.GC()
		runtime.GC()
		return nil
	})
	fn("later", func(_ js.Value, args []js.Value) any {
		d := time.Duration(args[0].Int()) * time.Millisecond
		go func() {
			time.Sleep(d)
			global.Set("laterDone", true)
		}()
		return nil
	})
	fn("zone", func(_ js.Value, _ []js.Value) any {
		_, off := time.Now().Zone()
		return off
	})
	fn("panic", func(_ js.Value, _ []js.Value) any { panic("callback boom") })
	fn("exit", func(_ js.Value, args []js.Value) any {
		os.Exit(args[0].Int())
		return nil
	})

	// BenchmarkCall's work: the same function the benchmark runs natively.
	fn("roundTrip", func(_ js.Value, args []js.Value) any {
		out, err := benchfn.RoundTrip(args[0].String())
		if err != nil {
			return err.Error()
		}
		return out
	})

	global.Set("__plingBridge", b)
	fmt.Println("ready")
	select {}
}

// growStack uses about kb KiB of stack, enough to make the runtime copy the
// goroutine's stack to a bigger one.
//
//go:noinline
func growStack(kb int) byte {
	var pad [1024]byte
	pad[kb%1024] = byte(kb)
	if kb == 0 {
		return pad[0]
	}
	return growStack(kb-1) + pad[kb%1024]
}
