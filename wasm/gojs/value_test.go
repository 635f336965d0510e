package gojs_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/wasm/gojs"
)

// TestNumberToString checks ECMA-262 Number::toString (§6.1.6.1.20).
func TestNumberToString(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-1.5, "-1.5"},
		{123.456, "123.456"},
		{0.30000000000000004, "0.30000000000000004"}, // 0.1 + 0.2 at run time
		{100, "100"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{1.5e21, "1.5e+21"},
		{0.000001, "0.000001"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{9007199254740992, "9007199254740992"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := gojs.NumberToString(tt.in); got != tt.want {
				t.Errorf("NumberToString(%v) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestToString(t *testing.T) {
	tests := []struct {
		name string
		in   gojs.Value
		want string
	}{
		{"undefined", nil, "undefined"},
		{"null", gojs.Null, "null"},
		{"bool", true, "true"},
		{"number", 2.5, "2.5"},
		{"string", "s", "s"},
		{"array", gojs.NewArray(1, nil, "x", gojs.Null, gojs.NewArray(2, 3)), "1,,x,,2,3"},
		{"bytes", gojs.NewUint8Array([]byte{1, 255}), "1,255"},
		{"object", gojs.NewObject(nil), "[object Object]"},
		{"error", gojs.NewError("bad"), "Error: bad"},
		{"error without message", gojs.NewError(""), "Error"},
		{"function", gojs.NewFunc("f", nil), "function f() { [native code] }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gojs.ToString(tt.in); got != tt.want {
				t.Errorf("ToString = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestValueOf(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any // plain()
	}{
		{"nil is undefined", nil, nil},
		{"int", 3, 3.0},
		{"uint8", uint8(7), 7.0},
		{"float32", float32(0.5), 0.5},
		{"bytes copied", []byte("ab"), []byte("ab")},
		{"[]any", []any{1, "a", nil, []string{"x"}}, []any{1.0, "a", nil, []any{"x"}}},
		{"map sorted", map[string]any{"b": 1, "a": map[string]string{"k": "v"}}, map[string]any{"a": map[string]any{"k": "v"}, "b": 1.0}},
		{"Func", gojs.Func(func(gojs.Value, []gojs.Value) (gojs.Value, error) { return nil, nil }), "function "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, plain(gojs.ValueOf(tt.in))); diff != "" {
				t.Errorf("ValueOf(%#v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	t.Run("object keys keep JavaScript order", func(t *testing.T) {
		o := gojs.NewObject(nil)
		for _, k := range []string{"b", "2", "a", "10", "01"} {
			o.Set(k, 1)
		}
		if diff := cmp.Diff([]string{"2", "10", "b", "a", "01"}, o.Keys()); diff != "" {
			t.Errorf("Keys mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("unsupported type panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("ValueOf(chan) did not panic")
			}
		}()
		gojs.ValueOf(make(chan int))
	})
}

// TestCompileRejects: Compile accepts only GOOS=js modules.
func TestCompileRejects(t *testing.T) {
	header := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	importsEnvF := append(append([]byte{}, header...),
		0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00, // type section: (i32) -> ()
		0x02, 0x09, 0x01, 0x03, 'e', 'n', 'v', 0x01, 'f', 0x00, 0x00, // import env.f
	)
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("hello"), "invalid magic number"},
		{"empty module", header, `no export "run"`},
		{"foreign import", importsEnvF, "it imports env.f"},
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gojs.Compile(ctx, r, tt.wasm)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile: err = %v; want it to contain %q", err, tt.want)
			}
		})
	}
}
