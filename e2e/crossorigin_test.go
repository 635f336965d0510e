package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/plinghttp"
)

// TestSRIFile: make wasm's dist/sri.json holds what plinghttp computes for
// the same files, so either can fill a script tag's integrity.
func TestSRIFile(t *testing.T) {
	d := dist(t)
	b, err := os.ReadFile(filepath.Join(d, "sri.json"))
	if err != nil {
		t.Fatalf("%v: make wasm writes dist/sri.json", err)
	}
	var got map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	h, err := plinghttp.New(os.DirFS(d), plinghttp.WithBrotli(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h.Integrities(), got); diff != "" {
		t.Errorf("dist/sri.json (-plinghttp +file):\n%s", diff)
	}
}

// distServer is plinghttp serving the built module in d, compressed
// lightly (brotli 5 and 1: the tests measure nothing); it fails the test
// when d lacks a file the pages load.
func distServer(t *testing.T, d string) *plinghttp.Server {
	t.Helper()
	ph, err := plinghttp.New(os.DirFS(d), plinghttp.WithBrotli(5, 1))
	if err != nil {
		t.Fatal(err)
	}
	if m := ph.Missing(); len(m) > 0 {
		t.Fatalf("%s lacks %v: run make wasm", d, m)
	}
	return ph
}

// TestCrossOriginSRI: a page on one loopback origin, cross-origin isolated
// (COEP require-corp), loads the shim and the module from plinghttp on
// another origin with Subresource Integrity on pling.js, wasm_exec.js and
// pling.wasm, and works; with a wrong integrity the shim is refused. The
// ES module entry loads from that origin too, told where the assets are.
func TestCrossOriginSRI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	d := dist(t)
	ph := distServer(t, d)
	assets := http.NewServeMux()
	assets.Handle("/pling/", ph)
	other := httptest.NewServer(assets)
	defer other.Close()

	stub, err := os.ReadFile("../js-shim/stub.js")
	if err != nil {
		t.Fatal(err)
	}
	declare := `pling.action({ id: "hello", title: "Say hello", params: { name: { type: "string", required: true } }, run: ({ name }) => "hi " + name + " from " + location.origin });`
	tag := func(shimIntegrity string) string {
		return `<script src="` + other.URL + `/pling/pling.js" integrity="` + shimIntegrity + `" crossorigin="anonymous" data-expose="*"` +
			` data-wasm-integrity="` + ph.Integrity("pling.wasm") + `" data-wasm-exec-integrity="` + ph.Integrity("wasm_exec.js") + `" defer></script>
<script>` + strings.TrimSpace(string(stub)) + "\n" + declare + `</script>`
	}
	pages := map[string]string{
		"/test/xorigin/sri.html":   tag(ph.Integrity("pling.js")),
		"/test/xorigin/wrong.html": tag("sha384-" + strings.Repeat("A", 64)),
		"/test/xorigin/esm.html": `<script type="module">
import { pling } from "` + other.URL + `/pling/pling.mjs";
pling.configure({ expose: ["*"], assets: "` + other.URL + `/pling/", wasmIntegrity: "` + ph.Integrity("pling.wasm") + `" });
` + declare + `
</script>`,
	}
	mux := http.NewServeMux()
	for p, body := range pages {
		html := "<!doctype html><html><head><meta charset=utf-8><title>xorigin</title></head><body>\n" + body + "\n</body></html>"
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			h.Set("Cross-Origin-Embedder-Policy", "require-corp")
			_, _ = w.Write([]byte(html))
		})
	}
	site := startBrowserSite(t, d, mux)
	if strings.HasPrefix(other.URL, site.url) || other.URL == site.url {
		t.Fatalf("the two servers share an origin: %s, %s", site.url, other.URL)
	}

	for _, p := range []string{"/test/xorigin/sri.html", "/test/xorigin/esm.html"} {
		t.Run(strings.TrimPrefix(p, "/test/xorigin/"), func(t *testing.T) {
			tb := site.open(t, p)
			if !eval[bool](tb, `crossOriginIsolated`) {
				t.Error("the page is not cross-origin isolated")
			}
			r := tb.mustInvoke("hello", map[string]any{"name": "agent"})
			var v string
			if err := json.Unmarshal(r.Value, &v); err != nil || v != "hi agent from "+site.url {
				t.Errorf("value %s, want %q", r.Value, "hi agent from "+site.url)
			}
			srcs := eval[[]string](tb, `performance.getEntriesByType("resource").map((e) => e.name).filter((n) => n.includes("/pling/"))`)
			for _, f := range []string{"/pling/pling.wasm", "/pling/wasm_exec.js"} {
				found := false
				for _, s := range srcs {
					found = found || s == other.URL+f
				}
				if !found {
					t.Errorf("%s was not loaded from %s: %v", f, other.URL, srcs)
				}
			}
		})
	}
	t.Run("a wrong integrity is refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		p, err := cdp.Open(ctx, site.url+"/test/xorigin/wrong.html", cdp.Options{Remote: site.remote, Timeout: 20 * time.Second})
		if err == nil {
			p.Close()
			t.Fatal("the page got Pling although pling.js's integrity was wrong")
		}
		if !strings.Contains(err.Error(), "does not speak Pling") {
			t.Errorf("error %v, want the page without Pling", err)
		}
	})
}
