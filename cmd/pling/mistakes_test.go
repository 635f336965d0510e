package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Feedback for the mistakes a newcomer makes first: each case names what
// it does and what pling must say.

func TestNoArguments(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantExit int
		inStdout bool
	}{
		{"no arguments: usage on stderr, exit 2", nil, 2, false},
		{"help: usage on stdout, exit 0", []string{"help"}, 0, true},
		{"--help: usage on stdout, exit 0", []string{"--help"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			if code != tc.wantExit {
				t.Errorf("exit %d, want %d", code, tc.wantExit)
			}
			where := errOut
			if tc.inStdout {
				where = out
			}
			if !strings.HasPrefix(where, "Usage: pling COMMAND") || !strings.Contains(where, "describe") {
				t.Errorf("no usage listing the commands where expected:\nstdout: %q\nstderr: %q", out, errOut)
			}
		})
	}
}

const hiddenFixture = `{
  "title": "Shop", "url": "https://shop.example/",
  "config": {"expose": ["cart.*"]},
  "actions": [
    {"id": "checkout", "title": "Check out", "run": {"return": 1}},
    {"id": "orders.open", "title": "Open", "run": {"return": 1}}
  ]
}`

func TestDescribeNothingExposed(t *testing.T) {
	hidden := "fixture:" + writeFixture(t, "hidden.json", hiddenFixture)
	empty := "fixture:" + writeFixture(t, "empty.json", `{"title": "Empty"}`)
	shop := "fixture:" + writeFixture(t, "shop.json", shopFixture)
	for _, tc := range []struct {
		name       string
		args       []string
		wantExit   int
		wantErrOut []string
		notErrOut  string
	}{
		{"declared but not exposed: says why", []string{"describe", hidden}, 0, []string{
			"the page exposes 0 capabilities",
			`why: 2 declared action(s) are not exposed by the site allowlist (data-expose / expose: "cart.*"); the page's console names them`,
			"fix: widen data-expose"}, ""},
		{"--strict exits 1", []string{"describe", "--strict", hidden}, 1, []string{"exposes 0 capabilities"}, ""},
		{"--strict with --json exits 1", []string{"describe", "--strict", "--json", hidden}, 1, []string{"exposes 0 capabilities"}, ""},
		{"nothing declared", []string{"describe", "--strict", empty}, 1, []string{"exposes 0 capabilities", "none declared (pling.action, data-pling-action)"}, ""},
		{"capabilities exposed: --strict passes, no warning", []string{"describe", "--strict", shop}, 0, nil, "exposes 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut := checkCmd(t, tc.args, tc.wantExit, nil, tc.wantErrOut)
			if tc.notErrOut != "" && strings.Contains(errOut, tc.notErrOut) {
				t.Errorf("stderr has %q:\n%s", tc.notErrOut, errOut)
			}
		})
	}
}

// TestDescribeFeedbackNamesHidden: the readable description lists the
// page's line on its hidden actions under Feedback, too.
func TestDescribeFeedbackNamesHidden(t *testing.T) {
	hidden := "fixture:" + writeFixture(t, "hidden.json", hiddenFixture)
	_, out, _ := runCmd(t, "describe", hidden)
	if !strings.Contains(out, "Feedback\n  warning: 2 declared action(s) are not exposed") {
		t.Errorf("no feedback line on the hidden actions:\n%s", out)
	}
}

func TestURLTargetMistakes(t *testing.T) {
	t.Setenv("PLING_CHROMIUM", "/nonexistent/chromium") // a real page gets as far as the browser
	mux := http.NewServeMux()
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) })
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	mux.HandleFunc("/pling.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		_, _ = w.Write([]byte("\x00asm"))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/missing", http.StatusFound) })
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>p</title>`))
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	for _, tc := range []struct {
		name, path string
		wantExit   int
		want       string
	}{
		{"404", "/missing", 1, "HTTP 404 at " + ts.URL + "/missing"},
		{"500", "/broken", 1, "HTTP 500 at " + ts.URL + "/broken"},
		{"a redirect to a 404", "/moved", 1, "HTTP 404 at " + ts.URL + "/moved"},
		{"JSON", "/data.json", 1, "not an HTML page: content-type application/json at " + ts.URL + "/data.json"},
		{"the module itself", "/pling.wasm", 1, "not an HTML page: content-type application/wasm"},
		{"an HTML page goes on to the browser", "/page", 1, "no browser at /nonexistent/chromium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range []string{"describe", "invoke"} {
				args := []string{cmd, ts.URL + tc.path}
				if cmd == "invoke" {
					args = append(args, "cart.add")
				}
				code, out, errOut := runCmd(t, args...)
				if code != tc.wantExit {
					t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", cmd, code, tc.wantExit, out, errOut)
				}
				if !strings.Contains(errOut, tc.want) {
					t.Errorf("%s: stderr lacks %q:\n%s", cmd, tc.want, errOut)
				}
				if strings.Contains(errOut, "does not speak Pling") {
					t.Errorf("%s: reported as a page without Pling:\n%s", cmd, errOut)
				}
			}
		})
	}
}

func TestTargetErrorsNameTheForms(t *testing.T) {
	const forms = "give an http:// or https:// page URL, or fixture:PATH"
	file := writeFixture(t, "page.json", shopFixture)
	for _, tc := range []struct{ name, target string }{
		{"a bare word", "shop"},
		{"an unknown scheme", "ftp://shop.example/"},
		{"a file without its kind", file},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, "describe", tc.target)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut, forms) && !strings.Contains(errOut, "fixture:"+file) {
				t.Errorf("stderr does not name the accepted forms:\n%s", errOut)
			}
		})
	}
}
