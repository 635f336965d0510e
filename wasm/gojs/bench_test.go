package gojs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/wasm/gojs"
	"github.com/pling-go/pling/wasm/gojs/testdata/benchfn"
)

// benchDoc is a JSON document of about 1 KB in benchfn.Doc's shape.
func benchDoc() string {
	var items []string
	for i := range 8 {
		items = append(items, fmt.Sprintf(`{"name":"item-%d","price":%d.25,"qty":%d}`, i, 10+i, i))
	}
	doc := fmt.Sprintf(`{"id":"doc-0001","kind":"order","count":41,"score":0.875,`+
		`"tags":["alpha","beta","gamma","delta"],`+
		`"attrs":{"region":"eu-west","tier":"gold","channel":"web","note":"%s"},`+
		`"items":[%s],"active":true}`, strings.Repeat("x", 400), strings.Join(items, ","))
	return doc
}

// BenchmarkCall measures a 1 KB JSON round trip (json.Unmarshal, then
// json.Marshal) through a js.FuncOf in the module, called from the host,
// against the same Go function called natively; x-native is the ratio.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	br := startBridge(b)
	fn := br.fn("roundTrip")
	doc := benchDoc()
	want, err := benchfn.RoundTrip(doc)
	if err != nil {
		b.Fatal(err)
	}
	if got, err := br.Call(ctx, fn, nil, doc); err != nil || got != want {
		b.Fatalf("roundTrip in the module = %#v, %v; want %q", got, err, want)
	}
	b.SetBytes(int64(len(doc)))

	for b.Loop() {
		if _, err := br.Call(ctx, fn, nil, doc); err != nil {
			b.Fatal(err)
		}
	}
	wasm := b.Elapsed() / time.Duration(b.N)

	n := b.N
	t0 := time.Now()
	for range n {
		if _, err := benchfn.RoundTrip(doc); err != nil {
			b.Fatal(err)
		}
	}
	native := time.Since(t0) / time.Duration(n)
	b.ReportMetric(float64(wasm)/float64(native), "x-native")
	b.ReportMetric(float64(native.Nanoseconds()), "native-ns/op")
}

// BenchmarkCallOverhead is the cost of the boundary alone: a call of a
// js.FuncOf that adds two numbers.
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	br := startBridge(b)
	fn := br.fn("add")
	for b.Loop() {
		if _, err := br.Call(ctx, fn, nil, 1, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart is the cost of a new instance of a compiled module (what a
// pool pays per instance), main included.
func BenchmarkStart(b *testing.B) {
	r, c := testModule(b)
	ctx := context.Background()
	for b.Loop() {
		inst, err := gojs.Start(ctx, r, c, gojs.Config{Args: []string{"module", "bridge"}})
		if err != nil {
			b.Fatal(err)
		}
		_ = inst.Close(ctx)
	}
}
