package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/conform"
)

// dist returns the directory with the built module, or skips when the
// module was not built (go test ./... without make). Under make test,
// PLING_DIST is set and a missing module is a failure.
func dist(t *testing.T) string {
	t.Helper()
	d := os.Getenv("PLING_DIST")
	if d == "" {
		abs, _ := filepath.Abs("../dist")
		if _, err := os.Stat(filepath.Join(abs, conform.Module)); err != nil {
			t.Skip(conform.Module + " is not built; run make wasm (make test does)")
		}
		return abs
	}
	if _, err := os.Stat(filepath.Join(d, conform.Module)); err != nil {
		t.Fatalf("PLING_DIST=%s has no %s: %v", d, conform.Module, err)
	}
	return d
}

// The hosts outlive a test: one node process and one browser serve every
// test of the package, and TestMain stops them.
var shared struct {
	sync.Mutex
	hosts []conform.Host
	err   error
	close []func() error
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, c := range shared.close {
		c()
	}
	os.Exit(code)
}

func hosts(t *testing.T) []conform.Host {
	d := dist(t)
	shared.Lock()
	defer shared.Unlock()
	if shared.hosts == nil && shared.err == nil {
		shared.hosts, shared.err = startHosts(t, d)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.hosts
}

func startHosts(t *testing.T, d string) ([]conform.Host, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, fmt.Errorf("node is not installed; the Node host is part of the suite")
	}
	n := &conform.Node{Script: "../js-shim/conform-host.js", Dist: d}
	shared.close = append(shared.close, n.Close)
	// A missing browser fails the test, as a missing node does: Chromium
	// is part of the suite (make test installs it when it can).
	c := &conform.Chromium{Dist: d}
	shared.close = append(shared.close, c.Close)
	start := time.Now()
	if err := c.Start(); err != nil {
		return nil, err
	}
	t.Logf("chromium started in %v", time.Since(start).Round(time.Millisecond))
	w := &conform.Wazero{Dist: d, CacheDir: filepath.Join(os.TempDir(), "pling-e2e-wazero-cache")}
	shared.close = append(shared.close, w.Close)
	return []conform.Host{conform.Native{}, w, n, c}, nil
}

// TestConformanceEveryHost runs every case on every host: each must pass,
// and every host must answer every step with the same bytes as native.
func TestConformanceEveryHost(t *testing.T) {
	hs := hosts(t)
	cases, err := conform.LoadDirStrict("conformance")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	took := map[string]time.Duration{}
	t.Cleanup(func() {
		for _, h := range hs {
			t.Logf("%s: %d cases in %v", h.Name(), len(cases), took[h.Name()].Round(time.Millisecond))
		}
	})
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var ref *conform.Result
			for _, h := range hs {
				r := conform.Run(ctx, h, c)
				took[h.Name()] += r.Duration
				if !r.Pass {
					t.Errorf("%s on %s:\n%s", c.File, h.Name(), strings.Join(r.Failures, "\n"))
				}
				if ref == nil {
					ref = r
					continue
				}
				for i := range r.Responses {
					if !bytes.Equal(r.Responses[i], ref.Responses[i]) {
						t.Errorf("%s: step %d: %s differs from %s:\n%s: %s\n%s: %s", c.File, i+1, h.Name(), hs[0].Name(),
							hs[0].Name(), ref.Responses[i], h.Name(), r.Responses[i])
					}
				}
			}
		})
	}
}

// TestHostEdges checks what the suite's cases do not reach: request text
// that would break out of a string if a host spliced it into code, and
// errors, which every bridge host must report as errors.
func TestHostEdges(t *testing.T) {
	hs := hosts(t)
	ctx := context.Background()
	page := json.RawMessage(`{"config":{"expose":["*"]},"actions":[{"id":"a.b","title":"A","run":{"return":{"ok":true}}}]}`)
	hostile := []string{
		`"); throw new Error("escaped"); ("`,
		"{\"protocol\":\"pling.surface/0.1\",\"id\":\"\u2028</script>\\\"`${x}`\u2029\",\"method\":\"describe\"}",
		"{\"protocol\":\"pling.surface/0.1\",\"id\":\"\u00e9\u4e2d\U0001F600\\ud800\",\"method\":\"invoke\",\"capability\":\"a.b\"}",
		"\x00 \x7f",
		"",
		// Bytes that are not UTF-8: every host carries a request's exact
		// bytes (a Uint8Array on the JS hosts), so each answers
		// invalid_utf8 as native does, none U+FFFD in their place.
		"{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"invoke\",\"capability\":\"a.b\",\"input\":{\"x\":\"\xff\"}}",
		"\xed\xa0\x80",
	}
	var ref [][]byte
	for _, h := range hs {
		p, err := h.Load(ctx, page)
		if err != nil {
			t.Fatalf("%s: load: %v", h.Name(), err)
		}
		for i, text := range hostile {
			got, err := p.Handle(ctx, []byte(text))
			if err != nil {
				t.Errorf("%s: request %d: %v", h.Name(), i, err)
				continue
			}
			if h == hs[0] {
				ref = append(ref, got)
			} else if !bytes.Equal(got, ref[i]) {
				t.Errorf("request %d %q: %s answered %s, %s answered %s", i, text, h.Name(), got, hs[0].Name(), ref[i])
			}
		}
		if _, err := p.Declare(ctx, json.RawMessage(`not json`)); err == nil {
			t.Errorf("%s: a declare step that is not JSON succeeded", h.Name())
		}
		p.Close()
		if h == hs[0] {
			continue
		}
		// A closed page is gone: the bridge's {error} is an error here.
		if _, err := p.Handle(ctx, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "no fixture page") {
			t.Errorf("%s: handle on a closed page: %v, want a no fixture page error", h.Name(), err)
		}
		if _, err := h.Load(ctx, json.RawMessage(`{"actions":`)); err == nil {
			t.Errorf("%s: a page that is not JSON loaded", h.Name())
		}
	}
}
