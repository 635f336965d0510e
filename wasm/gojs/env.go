package gojs

import (
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pling-go/pling/internal/jspattern"
)

// realm holds an instance's built-in prototypes. Objects made by the host
// (NewObject, NewArray, …) carry no prototype of their own and get the
// realm's default for their class wherever they are examined, so one host
// value can be handed to several instances.
type realm struct {
	objectProto, funcProto, arrayProto, u8Proto, errorProto, dateProto, regexpProto *Object
}

// noProto ends a prototype chain (Object.prototype's [[Prototype]] is null).
var noProto = &Object{class: classObject}

func (r *realm) protoOf(o *Object) *Object {
	if o.proto != nil {
		if o.proto == noProto {
			return nil
		}
		return o.proto
	}
	switch o.class {
	case "Array":
		return r.arrayProto
	case "Uint8Array":
		return r.u8Proto
	case "Function":
		return r.funcProto
	case classError:
		return r.errorProto
	case classDate:
		return r.dateProto
	case classRegExp:
		return r.regexpProto
	}
	return r.objectProto
}

// header returns the Object part of an object-like value, or nil for a
// primitive.
func header(v Value) *Object {
	switch v := v.(type) {
	case *Object:
		return v
	case *Array:
		return &v.Object
	case *Uint8Array:
		return &v.Object
	case *Function:
		return &v.Object
	}
	return nil
}

// prototypeObject is F.prototype, made on first use for host functions.
func (f *Function) prototypeObject() *Object {
	if f.prototype == nil {
		f.prototype = &Object{class: classObject}
		f.prototype.set("constructor", f)
	}
	return f.prototype
}

// method returns a built-in method for a prototype.
func method(name string, fn Func) *Function { return NewFunc(name, fn) }

// enosys is the error wasm_exec.js throws or passes to callbacks for every
// file-system operation it does not implement.
func enosys() *Object { return errnoError("ENOSYS", "not implemented") }

func errnoError(code, message string) *Object {
	e := NewError(message)
	e.Set("code", code)
	return e
}

func throwType(format string, args ...any) error {
	return &Exception{newTypedError("TypeError", fmt.Sprintf(format, args...))}
}

func arg(args []Value, i int) Value {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// newEnv builds globalThis and the Go object (id 6) for an instance: the
// parts of the JavaScript environment that the Go runtime, syscall,
// syscall/js, os and time use, with the behaviour wasm_exec.js gives them.
func (i *Instance) newEnv(cfg Config) {
	r := &i.realm
	r.objectProto = &Object{class: classObject, proto: noProto}
	r.funcProto = &Object{class: classObject}
	r.arrayProto = &Object{class: classObject}
	r.u8Proto = &Object{class: classObject}
	r.errorProto = &Object{class: classObject}
	r.dateProto = &Object{class: classObject}
	r.regexpProto = &Object{class: classObject}

	g := &Object{class: classObject}
	i.global = g
	g.set("globalThis", g)
	g.set("Object", r.newObject())
	g.set("Array", r.newArray())
	g.set("Uint8Array", r.newUint8Array())
	g.set("Error", r.newError())
	g.set("Date", r.newDate())
	g.set("RegExp", r.newRegExp())
	g.set("JSON", NewObject(map[string]any{
		"parse": NewFunc("parse", func(_ Value, args []Value) (Value, error) {
			return jsonParse(ToString(arg(args, 0)))
		}),
		"stringify": NewFunc("stringify", func(_ Value, args []Value) (Value, error) {
			return jsonStringify(arg(args, 0), arg(args, 2))
		}),
	}))
	i.newConsole(g, cfg)
	g.set("crypto", NewObject(map[string]any{
		"getRandomValues": NewFunc("getRandomValues", func(_ Value, args []Value) (Value, error) {
			a, ok := arg(args, 0).(*Uint8Array)
			if !ok {
				return nil, throwType("crypto.getRandomValues: argument is not a Uint8Array")
			}
			_, _ = rand.Read(a.Data)
			return a, nil
		}),
	}))

	g.set("performance", NewObject(map[string]any{
		"now": NewFunc("now", func(Value, []Value) (Value, error) {
			return float64(time.Since(i.start).Nanoseconds()) / 1e6, nil
		}),
	}))

	i.newProcess(g, cfg)
	i.newFS(g)
	g.set("path", NewObject(map[string]any{
		"resolve": NewFunc("resolve", func(_ Value, args []Value) (Value, error) {
			parts := make([]string, len(args))
			for k, a := range args {
				parts[k] = ToString(a)
			}
			return strings.Join(parts, "/"), nil
		}),
	}))

	// The Go object, ref 6: syscall/js calls _makeFuncWrapper for every
	// js.FuncOf and reads _pendingEvent in its event handler.
	i.goObj = &Object{class: classObject}
	i.goObj.set("_pendingEvent", Null)
	i.goObj.set("_makeFuncWrapper", NewFunc("_makeFuncWrapper", func(_ Value, args []Value) (Value, error) {
		id, _ := arg(args, 0).(float64)
		return &Function{Object: Object{class: "Function"}, goID: uint32(id), owner: i}, nil
	}))
}

// ctor is a constructor function of the realm: name, its prototype
// (whose constructor it becomes) and what new does.
func ctor(name string, proto *Object, construct func(args []Value) (Value, error)) *Function {
	f := &Function{Object: Object{class: "Function"}, name: name, construct: construct, prototype: proto}
	proto.set("constructor", f)
	return f
}

// newObject is the Object constructor, with Object.keys.
func (r *realm) newObject() *Function {
	object := ctor("Object", r.objectProto, func(args []Value) (Value, error) {
		if h := header(arg(args, 0)); h != nil {
			return args[0], nil
		}
		return &Object{class: classObject}, nil
	})
	object.set("keys", method("keys", func(_ Value, args []Value) (Value, error) {
		h := header(arg(args, 0))
		if h == nil {
			return nil, throwType("Object.keys called on non-object")
		}
		return ValueOf(h.Keys()), nil
	}))
	return object
}

// newArray is the Array constructor, with Array.isArray, and the
// prototype's push and join.
func (r *realm) newArray() *Function {
	array := ctor("Array", r.arrayProto, func(args []Value) (Value, error) {
		if len(args) == 1 {
			if n, ok := args[0].(float64); ok {
				if n < 0 || n != math.Trunc(n) || n > 1<<32-1 {
					return nil, &Exception{newTypedError("RangeError", "Invalid array length")}
				}
				return &Array{Object: Object{class: "Array"}, Elems: make([]Value, int(n))}, nil
			}
		}
		return &Array{Object: Object{class: "Array"}, Elems: append([]Value(nil), args...)}, nil
	})
	array.set("isArray", method("isArray", func(_ Value, args []Value) (Value, error) {
		_, ok := arg(args, 0).(*Array)
		return ok, nil
	}))
	r.arrayProto.set("push", method("push", func(this Value, args []Value) (Value, error) {
		a, ok := this.(*Array)
		if !ok {
			return nil, throwType("Array.prototype.push called on non-array")
		}
		a.Elems = append(a.Elems, args...)
		return float64(len(a.Elems)), nil
	}))
	r.arrayProto.set("join", method("join", func(this Value, args []Value) (Value, error) {
		a, ok := this.(*Array)
		if !ok {
			return nil, throwType("Array.prototype.join called on non-array")
		}
		sep := ","
		if s := arg(args, 0); s != nil {
			sep = ToString(s)
		}
		parts := make([]string, len(a.Elems))
		for k, e := range a.Elems {
			if e != nil && e != Null {
				parts[k] = ToString(e)
			}
		}
		return strings.Join(parts, sep), nil
	}))
	return array
}

// newUint8Array is the Uint8Array constructor, with the prototype's
// subarray.
func (r *realm) newUint8Array() *Function {
	u8 := ctor("Uint8Array", r.u8Proto, func(args []Value) (Value, error) {
		switch a := arg(args, 0).(type) {
		case nil:
			return NewUint8Array(nil), nil
		case float64:
			if a < 0 || a != math.Trunc(a) || a > 1<<31 {
				return nil, &Exception{newTypedError("RangeError", "Invalid typed array length: "+NumberToString(a))}
			}
			return NewUint8Array(make([]byte, int(a))), nil
		case *Uint8Array:
			return NewUint8Array(append([]byte(nil), a.Data...)), nil
		case *Array:
			b := make([]byte, len(a.Elems))
			for k, e := range a.Elems {
				b[k] = toUint8(e)
			}
			return NewUint8Array(b), nil
		}
		return nil, throwType("Uint8Array: unsupported argument")
	})
	r.u8Proto.set("subarray", method("subarray", func(this Value, args []Value) (Value, error) {
		a, ok := this.(*Uint8Array)
		if !ok {
			return nil, throwType("subarray called on non-Uint8Array")
		}
		n := len(a.Data)
		begin, end := relIndex(arg(args, 0), n, 0), relIndex(arg(args, 1), n, n)
		if end < begin {
			end = begin
		}
		return NewUint8Array(a.Data[begin:end:end]), nil
	}))
	return u8
}

// newError is the Error constructor and its prototype's name and message.
func (r *realm) newError() *Function {
	r.errorProto.set("name", "Error")
	r.errorProto.set("message", "")
	errorCtor := ctor("Error", r.errorProto, func(args []Value) (Value, error) {
		e := &Object{class: classError}
		if m := arg(args, 0); m != nil {
			e.set("message", ToString(m))
		}
		return e, nil
	})
	return errorCtor
}

// newDate is the Date constructor, with Date.now, and the prototype's
// getTimezoneOffset, getTime, valueOf and toISOString.
func (r *realm) newDate() *Function {
	date := ctor("Date", r.dateProto, func(args []Value) (Value, error) {
		t := time.Now()
		if ms, ok := arg(args, 0).(float64); ok {
			t = time.UnixMilli(toInt64(ms))
		}
		return &Object{class: classDate, date: t}, nil
	})
	date.set("now", method("now", func(Value, []Value) (Value, error) {
		return float64(time.Now().UnixMilli()), nil
	}))
	dateOf := func(this Value) (time.Time, error) {
		if o, ok := this.(*Object); ok && o.class == classDate {
			return o.date, nil
		}
		return time.Time{}, throwType("this is not a Date object.")
	}
	r.dateProto.set("getTimezoneOffset", method("getTimezoneOffset", func(this Value, _ []Value) (Value, error) {
		t, err := dateOf(this)
		if err != nil {
			return nil, err
		}
		// JavaScript's offset is UTC minus local time, in minutes.
		_, off := t.In(time.Local).Zone()
		return float64(-off / 60), nil
	}))
	getTime := method("getTime", func(this Value, _ []Value) (Value, error) {
		t, err := dateOf(this)
		if err != nil {
			return nil, err
		}
		return float64(t.UnixMilli()), nil
	})
	r.dateProto.set("getTime", getTime)
	r.dateProto.set("valueOf", getTime)
	r.dateProto.set("toISOString", method("toISOString", func(this Value, _ []Value) (Value, error) {
		t, err := dateOf(this)
		if err != nil {
			return nil, err
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
	}))
	return date
}

// newRegExp answers what the module asks of RegExp, new RegExp(source,
// "u") and test, as a browser's or Node's would, for the patterns the
// module hands it (internal/jspattern: Check, then ForRegExp): the same
// evaluator native Go uses. Other flags throw.
func (r *realm) newRegExp() *Function {
	re := ctor("RegExp", r.regexpProto, func(args []Value) (Value, error) {
		if flags := arg(args, 1); flags != "u" {
			return nil, &Exception{newTypedError("SyntaxError", "Invalid flags supplied to RegExp constructor: only u is supported here")}
		}
		test, err := jspattern.Compile(ToString(arg(args, 0)))
		if err != nil {
			return nil, &Exception{newTypedError("SyntaxError", "Invalid regular expression: "+err.Error())}
		}
		return &Object{class: classRegExp, test: test}, nil
	})
	r.regexpProto.set("test", method("test", func(this Value, args []Value) (Value, error) {
		o, ok := this.(*Object)
		if !ok || o.class != classRegExp {
			return nil, throwType("RegExp.prototype.test called on an incompatible receiver")
		}
		return o.test(ToString(arg(args, 0))), nil
	}))
	return re
}

// newConsole sets the instance's stdout and stderr (cfg's, else
// discarded) and globalThis.console, which writes to them.
func (i *Instance) newConsole(g *Object, cfg Config) {
	stdout, stderr := cfg.Stdout, cfg.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	i.stdout, i.stderr = stdout, stderr
	logTo := func(w io.Writer) Func {
		return func(_ Value, args []Value) (Value, error) {
			parts := make([]string, len(args))
			for k, a := range args {
				parts[k] = ToString(a)
			}
			_, _ = io.WriteString(w, strings.Join(parts, " ")+"\n")
			return nil, nil
		}
	}
	g.set("console", NewObject(map[string]any{
		"log":   NewFunc("log", logTo(stdout)),
		"info":  NewFunc("info", logTo(stdout)),
		"debug": NewFunc("debug", logTo(stdout)),
		"warn":  NewFunc("warn", logTo(stderr)),
		"error": NewFunc("error", logTo(stderr)),
	}))
}

func toUint8(v Value) byte {
	f := toNumber(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return byte(int64(math.Trunc(f)))
}

// relIndex resolves a relative index argument (negative counts from the
// end) against length n.
func relIndex(v Value, n, def int) int {
	f, ok := v.(float64)
	if !ok {
		return def
	}
	k := int(toInt64(f))
	if k < 0 {
		k += n
	}
	return max(0, min(k, n))
}

func (i *Instance) newProcess(g *Object, cfg Config) {
	// No users or groups exist in here; -1 is what wasm_exec.js answers.
	noID := func(Value, []Value) (Value, error) { return float64(-1), nil }
	i.umask = 0o022
	p := NewObject(map[string]any{
		"pid":      -1,
		"ppid":     -1,
		"platform": "js",
		"argv":     ValueOf(i.args),
		"env":      ValueOf(cfg.Env),
		"getuid":   NewFunc("getuid", noID),
		"getgid":   NewFunc("getgid", noID),
		"geteuid":  NewFunc("geteuid", noID),
		"getegid":  NewFunc("getegid", noID),
		"getgroups": NewFunc("getgroups", func(Value, []Value) (Value, error) {
			return NewArray(), nil
		}),
		"umask": NewFunc("umask", func(_ Value, args []Value) (Value, error) {
			old := i.umask
			if m, ok := arg(args, 0).(float64); ok {
				i.umask = int(toInt64(m)) & 0o777
			}
			return float64(old), nil
		}),
		"cwd": NewFunc("cwd", func(Value, []Value) (Value, error) { return "/", nil }),
		"chdir": NewFunc("chdir", func(Value, []Value) (Value, error) {
			return nil, &Exception{enosys()}
		}),
	})
	g.set("process", p)
}

// fsCallbackOps are the fs functions wasm_exec.js answers with
// callback(enosys()); the callback is the last argument.
var fsCallbackOps = []string{
	"chmod", "chown", "close", "fchmod", "fchown", "fstat", "ftruncate",
	"lchown", "link", "lstat", "mkdir", "open", "read", "readdir",
	"readlink", "rename", "rmdir", "stat", "symlink", "truncate", "unlink",
	"utimes",
}

func (i *Instance) newFS(g *Object) {
	fs := &Object{class: classObject}
	// Node's real flag values would let syscall.Open get as far as fs.open,
	// which fails anyway; -1 is what wasm_exec.js uses.
	constants := &Object{class: classObject}
	for _, c := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_EXCL", "O_DIRECTORY"} {
		constants.set(c, float64(-1))
	}
	fs.set("constants", constants)

	writeSync := func(args []Value) (int, *Object) {
		fd := toInt64(toNumber(arg(args, 0)))
		buf, ok := arg(args, 1).(*Uint8Array)
		if !ok {
			return 0, newTypedError("TypeError", "fs.write: buffer is not a Uint8Array")
		}
		w := i.writerFor(fd)
		if w == nil {
			return 0, errnoError("EBADF", "bad file descriptor")
		}
		n, err := w.Write(buf.Data)
		if err != nil {
			return n, errnoError("EIO", err.Error())
		}
		return len(buf.Data), nil
	}
	fs.set("writeSync", NewFunc("writeSync", func(_ Value, args []Value) (Value, error) {
		n, jsErr := writeSync(args)
		if jsErr != nil {
			return nil, &Exception{jsErr}
		}
		return float64(n), nil
	}))
	fs.set("write", NewFunc("write", func(_ Value, args []Value) (Value, error) {
		cb := arg(args, 5)
		buf, _ := arg(args, 1).(*Uint8Array)
		// Only whole-buffer writes at the current position, like
		// wasm_exec.js: offset !== 0 || length !== buf.length || position !== null.
		if buf == nil || arg(args, 2) != float64(0) || arg(args, 3) != float64(len(buf.Data)) || arg(args, 4) != Null {
			return i.callValue(cb, nil, []Value{enosys()})
		}
		n, jsErr := writeSync(args)
		if jsErr != nil {
			return i.callValue(cb, nil, []Value{jsErr})
		}
		return i.callValue(cb, nil, []Value{Null, float64(n)})
	}))
	fs.set("fsync", NewFunc("fsync", func(_ Value, args []Value) (Value, error) {
		return i.callValue(arg(args, len(args)-1), nil, []Value{Null})
	}))
	for _, name := range fsCallbackOps {
		fs.set(name, NewFunc(name, func(_ Value, args []Value) (Value, error) {
			if len(args) == 0 {
				return nil, throwType("fs.%s: no callback", name)
			}
			return i.callValue(args[len(args)-1], nil, []Value{enosys()})
		}))
	}
	g.set("fs", fs)
}

// writerFor maps a file descriptor to the configured output.
func (i *Instance) writerFor(fd int64) io.Writer {
	switch fd {
	case 1:
		return i.stdout
	case 2:
		return i.stderr
	}
	return nil
}

// arrayIndex parses a canonical array index ("0", "17"; not "01" or "-1").
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, false
	}
	return int(n), true
}
