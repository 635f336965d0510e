//go:build js && wasm

package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSpecDecodeFast checks each declaration's fast decode against
// json.Unmarshal where it applies, and that it declines what it cannot
// read exactly. Run it with
// GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./wasm/
func TestSpecDecodeFast(t *testing.T) {
	type kase struct {
		text string
		fast bool
	}
	check := func(t *testing.T, c kase, fast func(string) (any, bool), slow func(string) (any, error)) {
		t.Helper()
		got, ok := fast(c.text)
		if ok != c.fast {
			t.Errorf("%s: fast path applied %v, want %v", c.text, ok, c.fast)
		}
		if !ok {
			return
		}
		want, err := slow(c.text)
		if err != nil {
			t.Fatalf("%s: the fast path read it, json.Unmarshal failed: %v", c.text, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-json.Unmarshal +fast):\n%s", c.text, diff)
		}
	}
	actions := []kase{
		{`{"id":"approve","title":"Approve order","description":"Approves a pending order so the warehouse ships it.","record":{"kind":"order"},"params":{"note":{"type":"string","maxLength":200,"description":"A note for the warehouse"}},"expect":{"state":"orders.pending","change":"decrease"},"identity":"function () {}"}`, true},
		{`{"id":"refund","title":"Refund","risk":"destructive","approval":true,"record":{"kind":"order","allowOffscreen":true,"id":"o-1"},"params":{"reason":{"type":"string","required":true,"enum":["damaged",1,true,null,{"a":[2.5]}],"minimum":-1.5,"maximum":1e21,"minLength":0,"minItems":1,"maxItems":3,"pattern":"^x$","default":"late","items":{"type":"number","items":{}}}},"region":"main","identity":{"k":[1,"x"]}}`, true},
		{`{"id":"wizard","title":"W","steps":[{"title":"one","expect":{"state":"s","change":"increase","timeoutMs":500}},{}],"handoff":{"prompt":"Sign","timeoutMs":30000}}`, true},
		{`{"id":"x","params":{}}`, true},
		{`{"id":"x","steps":[]}`, true},
		{`{"id":"x","expect":{"state":"s","equals":3}}`, false}, // equals is raw text
		{`{"id":"x","expect":null}`, false},
		{`{"id":"x","ID":"y"}`, false},
		{`{"id":"x","params":{"p":{"type":"string","default":null}}}`, false},
		{`{"id":"x","params":{"p":{"minLength":1.5}}}`, false},
		{`{"id":"x","handoff":{"timeoutMs":"1"}}`, false},
		{`{"id":"x","record":{"kind":"order","Kind":"other"}}`, false},
		{`{"id":1}`, false},
		{`[]`, false},
	}
	for _, c := range actions {
		check(t, c, func(s string) (any, bool) {
			var a actionSpec
			ok := a.decodeFast(s)
			return a, ok
		}, func(s string) (any, error) {
			var a actionSpec
			err := json.Unmarshal([]byte(s), &a)
			return a, err
		})
	}
}

// A page's …Ms numbers become the runtime's durations without overflow.
func TestMsDuration(t *testing.T) {
	tests := []struct {
		name string
		ms   int64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"a minute", 60_000, time.Minute},
		{"negative", -5, -5 * time.Millisecond},
		{"too large", math.MaxInt64, math.MaxInt64},
		{"too small", math.MinInt64, math.MinInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := msDuration(tc.ms); got != tc.want {
				t.Errorf("msDuration(%d) = %v, want %v", tc.ms, got, tc.want)
			}
		})
	}
}
