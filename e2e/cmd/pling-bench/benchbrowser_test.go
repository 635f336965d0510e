package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/tetratelabs/wazero"

	"github.com/pling-go/pling/internal/demosite"
)

func TestDistOf(t *testing.T) {
	d := distOf([]float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5})
	want := bbDist{N: 10, P50: 5.5, P10: 1.9, P90: 9.1, Min: 1, Max: 10}
	const eps = 1e-9
	if d.N != want.N || abs(d.P50-want.P50) > eps || abs(d.P10-want.P10) > eps || abs(d.P90-want.P90) > eps || d.Min != want.Min || d.Max != want.Max {
		t.Errorf("distOf = %+v, want %+v", d, want)
	}
	if got := distOf(nil); got.N != 0 {
		t.Errorf("distOf(nil) = %+v", got)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func axValue(s string) *accessibility.Value {
	b, _ := json.Marshal(s)
	return &accessibility.Value{Type: "string", Value: b}
}

func TestAXSnapshot(t *testing.T) {
	n := func(id, parent, role, name string, kids ...string) *accessibility.Node {
		node := &accessibility.Node{NodeID: accessibility.NodeID(id), ParentID: accessibility.NodeID(parent), Role: axValue(role), Name: axValue(name)}
		for _, k := range kids {
			node.ChildIDs = append(node.ChildIDs, accessibility.NodeID(k))
		}
		return node
	}
	ignored := n("3", "2", "none", "", "4")
	ignored.Ignored = true
	nodes := []*accessibility.Node{
		n("1", "", "RootWebArea", "Orders", "2"),
		n("2", "1", "generic", "", "3"),
		ignored,
		n("4", "3", "table", "Orders", "5", "7"),
		n("5", "4", "row", "Order", "6"),
		n("6", "5", "columnheader", "Order"),
		n("7", "4", "row", "#1001 Approve order #1001", "8", "10"),
		n("8", "7", "cell", "#1001", "9"),
		n("9", "8", "StaticText", "#1001"),
		n("10", "7", "button", "Approve order #1001", "11"),
		n("11", "10", "StaticText", "Approve", "12"),
		n("12", "11", "InlineTextBox", "Approve"),
		n("13", "1", "StaticText", "500 shown", "14"),
		n("14", "13", "InlineTextBox", "500 shown"),
	}
	nodes[0].ChildIDs = append(nodes[0].ChildIDs, "13")
	text, rows := axSnapshot(nodes)
	want := `- RootWebArea "Orders"
 - table "Orders"
  - row "Order"
   - columnheader "Order"
  - row "#1001 Approve order #1001"
   - cell "#1001"
   - button "Approve order #1001"
 - text "500 shown"
`
	if text != want {
		t.Errorf("axSnapshot text:\n%s\nwant:\n%s", text, want)
	}
	if rows != 1 {
		t.Errorf("rows = %d, want 1 (the header row has no cells)", rows)
	}
}

func TestWithCustomSection(t *testing.T) {
	empty := []byte("\x00asm\x01\x00\x00\x00")
	b, err := withCustomSection(empty, "pling.bench", "max-age")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, empty...), 0, 19, 11)
	want = append(append(want, "pling.bench"...), "max-age"...)
	if !bytes.Equal(b, want) {
		t.Fatalf("withCustomSection = %x, want %x", b, want)
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	if _, err := r.CompileModule(ctx, b); err != nil {
		t.Errorf("the module with the custom section does not compile: %v", err)
	}
	if _, err := withCustomSection([]byte("nope"), "x", "y"); err == nil {
		t.Error("withCustomSection accepted bytes that are not a module")
	}
	if got := uleb(300); !bytes.Equal(got, []byte{0xac, 0x02}) {
		t.Errorf("uleb(300) = %x", got)
	}
}

func TestBenchOrdersVariants(t *testing.T) {
	vs, err := benchOrdersVariants(demosite.Demo())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]bool{"pling": {true, false}, "polyfill": {false, true}, "none": {false, false}, "empty": {false, false}} {
		page := string(vs[name])
		if !strings.Contains(page, `<base href="/orders/">`) {
			t.Errorf("%s: no <base>, so orders.js would not load", name)
		}
		if got := strings.Contains(page, "/pling/pling.js"); got != want[0] {
			t.Errorf("%s: loads the shim %v, want %v", name, got, want[0])
		}
		if got := strings.Contains(page, "/bench/webmcp-polyfill.js"); got != want[1] {
			t.Errorf("%s: loads the polyfill %v, want %v", name, got, want[1])
		}
	}
}

func TestBenchDemo(t *testing.T) {
	demo, err := benchDemo(demosite.Demo(), []byte("/* polyfill */"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"orders/index.html", "orders/orders.js", "bench/blank.html", "bench/caps.html", "bench/poly.html",
		"bench/visit.html", "bench/webmcp-polyfill.js", "bench/orders-pling.html", "bench/orders-polyfill.html", "bench/orders-none.html", "bench/orders-empty.html"} {
		if _, err := demo.Open(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestExperimentFiles(t *testing.T) {
	es := []cachingExperiment{{name: "max-age", cache: "public, max-age=300", streaming: true}, {name: "no-store", cache: "no-store", streaming: true}}
	x, err := newExperimentFiles([]byte("\x00asm\x01\x00\x00\x00"+strings.Repeat("\x00\x03abc", 200)), es)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(x)
	defer srv.Close()
	get := func(path, accept, inm string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", accept)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := get(es[0].url(), "gzip, deflate, br", "")
	for k, want := range map[string]string{
		"Content-Type": "application/wasm", "Content-Encoding": "br", "Cache-Control": "public, max-age=300",
		"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp", "Cross-Origin-Resource-Policy": "cross-origin",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	etag := res.Header.Get("ETag")
	if res := get(es[0].url(), "gzip, deflate, br", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: status %d, want 304", etag, res.StatusCode)
	}
	if res := get(es[1].url(), "gzip", ""); res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("no-store experiment: %v", res.Header)
	}
	if res := get("/bench/wasm/other/pling.wasm", "", ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown experiment: status %d", res.StatusCode)
	}
}

func TestWriteBenchSVG(t *testing.T) {
	ts := []bbTarget{
		target("met <fast>", 0.5, 1, "×", ""),
		target("missed & slow", 3, 1, "×", ""),
		target("far below", 1e-6, 1, "B", ""),
		target("far above", 1e6, 1, "ms", ""),
	}
	var b bytes.Buffer
	if err := writeBenchSVG(&b, "title", ts); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	rects := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 1+len(ts) {
		t.Errorf("%d rects, want a background and one bar per target (%d)", rects, 1+len(ts))
	}
}

func TestTargetVerdict(t *testing.T) {
	if v := target("x", 3, 2, "ms", "").verdict(); v != "MISSED by 50%" {
		t.Errorf("verdict = %q", v)
	}
	if v := target("x", 2, 2, "ms", "").verdict(); v != "met" {
		t.Errorf("verdict = %q", v)
	}
}

func TestPolyfillGiven(t *testing.T) {
	f, v, err := polyfillIIFE(context.Background(), "/some/file.js", t.TempDir(), func(string, ...any) { t.Error("npm should not run") })
	if err != nil || f != "/some/file.js" || v == "" {
		t.Errorf("polyfillIIFE(given) = %q, %q, %v", f, v, err)
	}
}
