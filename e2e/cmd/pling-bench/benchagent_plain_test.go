package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWithoutPling: the help desk without Pling serves its pages with the
// shim's script tag replaced by the no-op stand-in, whatever encoding the
// browser accepts, and no file of the shim at all.
func TestWithoutPling(t *testing.T) {
	page := `<!doctype html><head>` + plingScriptTag + `</head><body>Tickets</body>`
	h := withoutPling(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("the site was asked for an encoding (%q): the page could not be rewritten", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", "999")
		io.WriteString(w, page)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/tickets/", nil)
	req.Header.Set("Accept-Encoding", "br, gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if got := string(b); strings.Contains(got, "pling.js") || !strings.Contains(got, plingNoop) || !strings.Contains(got, "Tickets") {
		t.Errorf("the page without Pling:\n%s", got)
	}
	res, err = http.Get(srv.URL + "/pling/pling.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("/pling/pling.js answered %d, want 404", res.StatusCode)
	}
}

// TestPlainTargets: a task without Pling has its own targets (bytes at
// most the snapshot path's, calls at most 1.2 times), and stays out of
// the totals of the Pling sites.
func TestPlainTargets(t *testing.T) {
	tasks := []agentResult{
		{Name: "plain", WithoutPling: true, Sides: []agentFigure{{Side: sidePling, Calls: 4, Received: 8000}, {Side: sidePWSnapshot, Calls: 3, Received: 16000}}},
		{Name: "pling", Sides: []agentFigure{{Side: sidePling, Calls: 1, Received: 4000}, {Side: sidePWSnapshot, Calls: 5, Received: 24000}}},
	}
	got := plainTargets(tasks)
	if len(got) != 2 || !got[0].Met || got[0].Value != 0.5 || got[1].Met || got[1].Name != "calls vs snapshot path: plain" {
		t.Errorf("plainTargets = %+v; want bytes 0.5 met, calls 1.33 missed", got)
	}
	p, _ := figure(agentTotals(tasks), sidePling)
	if p.Calls != 1 || p.Received != 4000 {
		t.Errorf("the totals count the task without Pling: %+v", p)
	}
}
