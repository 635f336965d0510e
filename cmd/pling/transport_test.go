package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shopFixture is the fixture page the agent-side command tests serve.
const shopFixture = `{
  "title": "Shop", "url": "https://shop.example/",
  "states": {"cart.count": 0},
  "records": {"order": [{"id": "ord_1", "label": "#1001", "visible": true},
                        {"id": "ord_2", "label": "#1002", "visible": false}]},
  "actions": [
    {"id": "cart.add", "title": "Add to cart", "params": {"sku": {"type": "string", "required": true}},
     "run": {"set": {"cart.count": {"add": 1}}, "return": {"added": true}},
     "expect": {"state": "cart.count", "change": "increase"}},
    {"id": "approve", "title": "Approve order", "record": {"kind": "order"}, "run": {"return": {"approved": true}}},
    {"id": "cart.clear", "title": "Clear cart", "risk": "destructive", "run": {"throw": "the cart is locked"}},
    {"id": "checkout", "title": "Checkout", "available": "Cart is empty"}
  ]
}`

// sessionFixture requires a session; tok_a may touch the cart only.
const sessionFixture = `{
  "config": {"session": {"required": true, "tokens": {"tok_a": {"subject": "alice", "scope": ["cart.*"]}}}},
  "actions": [
    {"id": "cart.add", "title": "Add to cart", "run": {"return": 1}},
    {"id": "order.refund", "title": "Refund", "run": {"return": 2}}
  ]
}`

func writeFixture(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureTargets makes URL targets fail fast (PLING_CHROMIUM names no
// browser) and returns the shop and session fixtures as targets
// (fixture:PATH).
func fixtureTargets(t *testing.T) (shop, sess string) {
	t.Helper()
	t.Setenv("PLING_CHROMIUM", "/nonexistent/chromium")
	return "fixture:" + writeFixture(t, "shop.json", shopFixture), "fixture:" + writeFixture(t, "session.json", sessionFixture)
}

// writeTree writes files (path → text, the paths slash-separated) into
// a new temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runCmd runs the pling command line and returns the exit status and
// both outputs.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTransportFor(t *testing.T) {
	t.Setenv("PLING_CHROMIUM", "/nonexistent/chromium") // URL targets fail fast: no browser

	shop := writeFixture(t, "shop.json", shopFixture)
	caseFile := writeFixture(t, "case.json", `{"name": "a case", "page": `+shopFixture+`, "steps": []}`)
	tests := []struct {
		name, target string
		wantErr      string // "" for success
		wantExit     int
	}{
		{name: "fixture", target: "fixture:" + shop},
		{name: "a conformance case's page", target: "fixture:" + caseFile},
		{name: "empty", target: "", wantErr: "no target", wantExit: 2},
		{name: "fixture without path", target: "fixture:", wantErr: "needs a path", wantExit: 2},
		{name: "missing file", target: "fixture:" + filepath.Join(t.TempDir(), "nope.json"), wantErr: "no such file", wantExit: 1},
		{name: "not a page", target: "fixture:" + writeFixture(t, "bad.json", `[1,2]`), wantErr: "fixture", wantExit: 1},
		{name: "https URL", target: "https://shop.example/", wantErr: "no browser at", wantExit: 1},
		{name: "http URL", target: "http://localhost:8080/shop/", wantErr: "no browser at", wantExit: 1},
		{name: "unknown scheme", target: "ws://x", wantErr: "unknown kind of target", wantExit: 2},
		{name: "a bare file", target: shop, wantErr: "fixture:" + shop, wantExit: 2},
		{name: "nonsense", target: "shop", wantErr: "not a target", wantExit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := transportFor(context.Background(), tt.target)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				resp, err := tr.RoundTrip(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"r1","method":"describe"}`))
				if err != nil || !bytes.Contains(resp, []byte(`"cart.add"`)) {
					t.Errorf("describe through the transport: %s, %v", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
			if got := targetExit(err); got != tt.wantExit {
				t.Errorf("exit %d, want %d", got, tt.wantExit)
			}
		})
	}
}
