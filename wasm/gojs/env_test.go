package gojs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestEnv builds an instance's JavaScript environment without a module.
func newTestEnv(t *testing.T) (*Instance, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	i := &Instance{start: time.Now(), args: []string{"js"}}
	i.newEnv(Config{Stdout: &stdout, Stderr: &stderr})
	return i, &stdout, &stderr
}

// global calls globalThis.path[0].path[1]…(args) the way valueCall does.
func (i *Instance) callPath(t *testing.T, args []Value, path ...string) (Value, error) {
	t.Helper()
	var this Value = i.global
	for _, p := range path[:len(path)-1] {
		v, err := i.get(this, p)
		if err != nil {
			t.Fatal(err)
		}
		this = v
	}
	return i.callMethod(this, path[len(path)-1], args)
}

func TestJSON(t *testing.T) {
	i, _, _ := newTestEnv(t)
	tests := []struct {
		name  string
		in    string
		space Value
		want  string // JSON.stringify(JSON.parse(in), null, space)
	}{
		{"key order kept", `{"b":1,"a":[1,2,{"x":null}]}`, nil, `{"b":1,"a":[1,2,{"x":null}]}`},
		{"numbers as JavaScript prints them", `[1.0, 1e21, 1e-7, -0, 1e400]`, nil, `[1,1e+21,1e-7,0,null]`},
		{"escapes as JavaScript", `"\u2028<&>\u0001\t\"\\é"`, nil, "\"\u2028<&>\\u0001\\t\\\"\\\\é\""},
		{"array-index keys first", `{"b":1,"1":2,"a":3,"0":4}`, nil, `{"0":4,"1":2,"b":1,"a":3}`},
		{"duplicate keys: last wins", `{"a":1,"a":2}`, nil, `{"a":2}`},
		{"indent by number", `{"a":[1,{}],"b":{}}`, 2.0, "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {}\n}"},
		{"indent by string", `[1]`, "\t", "[\n\t1\n]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsonParse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonStringify(v, tt.space)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}

	errTests := []struct{ name, in, want string }{
		{"empty", ``, "SyntaxError"},
		{"trailing data", `{} x`, "SyntaxError"},
		{"bad token", `{"a":}`, "SyntaxError"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := i.callPath(t, []Value{tt.in}, "JSON", "parse")
			var ex *Exception
			if !errors.As(err, &ex) || !strings.Contains(describe(ex.Value), tt.want) {
				t.Errorf("JSON.parse(%q): err = %v; want a thrown %s", tt.in, err, tt.want)
			}
		})
	}

	t.Run("stringify special values", func(t *testing.T) {
		fn := NewFunc("f", nil)
		date := &Object{class: classDate, date: time.Date(2024, 5, 6, 7, 8, 9, 10e6, time.UTC)}
		obj := NewObject(map[string]any{"f": fn, "u": nil, "n": math.NaN(), "d": date, "a": NewArray(fn, nil)})
		got, err := jsonStringify(obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"a":[null,null],"d":"2024-05-06T07:08:09.010Z","n":null}`; got != want {
			t.Errorf("got %q; want %q", got, want)
		}
		if v, _ := jsonStringify(nil, nil); v != nil {
			t.Errorf("stringify(undefined) = %#v; want undefined", v)
		}
		if v, _ := jsonStringify(fn, nil); v != nil {
			t.Errorf("stringify(function) = %#v; want undefined", v)
		}
		cyc := NewObject(nil)
		cyc.Set("self", cyc)
		if _, err := jsonStringify(cyc, nil); err == nil {
			t.Error("stringify of a cycle: no error")
		}
	})
}

// FuzzJSON: whatever JSON.parse accepts, stringify writes text that parses
// back to the same text; it accepts exactly what encoding/json calls valid.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[1,2,{"x":null}]}`, `[1.0, 1e21, 1e-7, -0, 1e400]`,
		`"\u2028<&>\u0001\t\"\\é"`, `{"b":1,"1":2,"a":3,"0":4}`, `{"a":1,"a":2}`,
		`{} x`, `{"a":}`, ``, `true`, `null`, `"\ud800"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := jsonParse(in)
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Fatalf("jsonParse(%q): err = %v, but json.Valid = %v", in, err, valid)
		}
		if err != nil {
			return
		}
		out, err := jsonStringify(v, nil)
		if err != nil {
			t.Fatalf("stringify(parse(%q)): %v", in, err)
		}
		v2, err := jsonParse(out.(string))
		if err != nil {
			t.Fatalf("parse(%q) of our own output: %v", out, err)
		}
		out2, _ := jsonStringify(v2, nil)
		if out2 != out {
			t.Fatalf("not stable: %q → %q → %q", in, out, out2)
		}
	})
}

func TestInstanceOfAndGet(t *testing.T) {
	i, _, _ := newTestEnv(t)
	ctor := func(name string) Value { return i.global.Get(name) }
	host := NewFunc("Host", func(this Value, args []Value) (Value, error) {
		this.(*Object).Set("made", true)
		return nil, nil
	})
	made, err := i.construct(host, nil)
	if err != nil {
		t.Fatal(err)
	}
	date, err := i.construct(ctor("Date"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    Value
		want []bool // instanceof Object, Array, Uint8Array, Date, Error, Host
	}{
		{"object", NewObject(nil), []bool{true, false, false, false, false, false}},
		{"array", NewArray(), []bool{true, true, false, false, false, false}},
		{"bytes", NewUint8Array(nil), []bool{true, false, true, false, false, false}},
		{"date", date, []bool{true, false, false, true, false, false}},
		{"error", NewError("x"), []bool{true, false, false, false, true, false}},
		{"function", host, []bool{true, false, false, false, false, false}},
		{"new Host()", made, []bool{true, false, false, false, false, true}},
		{"number", 1.0, []bool{false, false, false, false, false, false}},
		{"null", Null, []bool{false, false, false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []bool
			for _, c := range []Value{ctor("Object"), ctor("Array"), ctor("Uint8Array"), ctor("Date"), ctor("Error"), host} {
				got = append(got, i.instanceOf(tt.v, c))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("instanceof mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if got := made.(*Object).Get("made"); got != true {
		t.Errorf("new Host(): this.made = %#v", got)
	}

	t.Run("array and typed array access", func(t *testing.T) {
		a := NewArray(1, 2)
		if err := i.set(a, "length", 4.0); err != nil {
			t.Fatal(err)
		}
		if err := i.setIndex(a, 5, "x"); err != nil {
			t.Fatal(err)
		}
		if n, _ := i.length(a); n != 6 {
			t.Errorf("length = %d; want 6", n)
		}
		if v, _ := i.get(a, "1"); v != 2.0 {
			t.Errorf("a[1] = %#v", v)
		}
		if v, _ := i.callMethod(a, "join", []Value{"-"}); v != "1-2----x" {
			t.Errorf("join = %#v", v)
		}
		u := NewUint8Array(make([]byte, 3))
		for k, x := range []Value{300.0, -1.0, "7"} {
			if err := i.setIndex(u, int64(k), x); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]byte{44, 255, 7}, u.Data); diff != "" {
			t.Errorf("Uint8Array stores ToUint8 (-want +got):\n%s", diff)
		}
		if v, _ := i.get("héllo😀", "length"); v != 7.0 {
			t.Errorf(`"héllo😀".length = %#v; want 7 (UTF-16 units)`, v)
		}
		if _, err := i.get(nil, "x"); err == nil {
			t.Error("get on undefined: no TypeError")
		}
	})
}

func TestEnvironment(t *testing.T) {
	i, stdout, stderr := newTestEnv(t)
	var cbArgs []Value
	cb := NewFunc("cb", func(_ Value, args []Value) (Value, error) {
		cbArgs = args
		return nil, nil
	})
	buf := NewUint8Array([]byte("out\n"))

	if _, err := i.callPath(t, []Value{1.0, buf, 0.0, 4.0, Null, cb}, "fs", "write"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Value{Null, 4.0}, cbArgs); diff != "" {
		t.Errorf("fs.write callback args (-want +got):\n%s", diff)
	}
	if _, err := i.callPath(t, []Value{2.0, NewUint8Array([]byte("err\n"))}, "fs", "writeSync"); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	codeOf := func(v Value) Value { return v.(*Object).Get("code") }

	// A write at an offset, and any other fs call, answer ENOSYS.
	if _, err := i.callPath(t, []Value{1.0, buf, 1.0, 3.0, Null, cb}, "fs", "write"); err != nil {
		t.Fatal(err)
	}
	if got := codeOf(cbArgs[0]); got != "ENOSYS" {
		t.Errorf("fs.write at offset: code %#v", got)
	}
	if _, err := i.callPath(t, []Value{"/x", 0.0, 0.0, cb}, "fs", "open"); err != nil {
		t.Fatal(err)
	}
	if got := codeOf(cbArgs[0]); got != "ENOSYS" {
		t.Errorf("fs.open: code %#v", got)
	}
	_, err := i.callPath(t, []Value{3.0, buf}, "fs", "writeSync")
	var ex *Exception
	if !errors.As(err, &ex) || codeOf(ex.Value) != "EBADF" {
		t.Errorf("writeSync(3): err = %v; want EBADF", err)
	}

	// process
	if v, _ := i.callPath(t, []Value{float64(0o077)}, "process", "umask"); v != float64(0o022) {
		t.Errorf("umask = %#v; want 0o022", v)
	}
	if v, _ := i.callPath(t, nil, "process", "umask"); v != float64(0o077) {
		t.Errorf("umask after set = %#v; want 0o077", v)
	}
	if v, _ := i.callPath(t, nil, "process", "getgroups"); len(v.(*Array).Elems) != 0 {
		t.Errorf("getgroups = %#v", v)
	}
	if _, err := i.callPath(t, []Value{"/tmp"}, "process", "chdir"); !errors.As(err, &ex) || codeOf(ex.Value) != "ENOSYS" {
		t.Errorf("chdir: err = %v; want ENOSYS", err)
	}

	// Date and console
	d, _ := i.construct(i.global.Get("Date"), []Value{0.0})
	_, off := time.Unix(0, 0).In(time.Local).Zone()
	if v, _ := i.callMethod(d, "getTimezoneOffset", nil); v != float64(-off/60) {
		t.Errorf("getTimezoneOffset = %#v; want %d", v, -off/60)
	}
	if v, _ := i.callMethod(d, "toISOString", nil); v != "1970-01-01T00:00:00.000Z" {
		t.Errorf("toISOString = %#v", v)
	}
	stdout.Reset()
	if _, err := i.callPath(t, []Value{"a", 1.0, true, nil}, "console", "log"); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "a 1 true undefined\n" {
		t.Errorf("console.log wrote %q", stdout)
	}
	// crypto
	r := NewUint8Array(make([]byte, 16))
	if _, err := i.callPath(t, []Value{r}, "crypto", "getRandomValues"); err != nil || bytes.Equal(r.Data, make([]byte, 16)) {
		t.Errorf("getRandomValues: %v, %x", err, r.Data)
	}
}

// TestRegExp: new RegExp(source, "u") and test answer as ECMAScript does,
// with the evaluator native Go uses, for what the module hands them
// (a lookahead RE2 lacks, $ only at the very end); other flags and
// patterns outside the subset throw a SyntaxError.
func TestRegExp(t *testing.T) {
	i, _, _ := newTestEnv(t)
	ctor, err := i.get(i.global, "RegExp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, source, input string
		want                bool
	}{
		{"lookahead", `^[^]*?(?:^(?=.*\d)[a-z0-9]+$)`, "abc1", true},
		{"lookahead fails", `^[^]*?(?:^(?=.*\d)[a-z0-9]+$)`, "abc", false},
		{"$ is the very end", `^[^]*?(?:^[a-z]+$)`, "abc\n", false},
		{"unanchored search", `^[^]*?(?:\d)`, "ab1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re, err := i.construct(ctor, []Value{tc.source, "u"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := i.callMethod(re, "test", []Value{tc.input})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("test(%q) = %v, want %v", tc.input, got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, source, flags string }{
		{"RE2 syntax", `(?i)a`, "u"},
		{"named group", `(?<a>a)`, "u"},
		{"flags other than u", `a`, "g"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := i.construct(ctor, []Value{tc.source, tc.flags})
			var ex *Exception
			if !errors.As(err, &ex) || ToString(ex.Value) == "" || !strings.HasPrefix(ToString(ex.Value), "SyntaxError") {
				t.Errorf("new RegExp(%q, %q): %v, want a SyntaxError thrown", tc.source, tc.flags, err)
			}
		})
	}
}
