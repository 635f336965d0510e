package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// longTablePage is a table of 100 tickets: its button closes T-7 at once,
// and the page asks the server every 100 ms whether T-42 is escalated,
// so that a row changes between two looks with no action of the agent's.
func longTablePage() string {
	var p strings.Builder
	p.WriteString(`<!doctype html><html><head><title>Tickets</title></head><body>
<h1>Tickets</h1><button id="close">Close T-7</button>
<table><thead><tr><th>Ticket</th><th>Status</th></tr></thead><tbody>`)
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&p, `<tr><td>T-%d</td><td id="s%d">open</td></tr>`, i, i)
	}
	p.WriteString(`</tbody></table>
<script>
document.getElementById("close").onclick = () => { document.getElementById("s7").textContent = "closed"; };
setInterval(() => fetch("/state").then((r) => r.text()).then((s) => { if (s === "escalate") document.getElementById("s42").textContent = "escalated"; }), 100);
</script></body></html>`)
	return p.String()
}

// TestMCPViewScopedToChanges: through the pling binary and the Go SDK's
// client, the first look at a long table is its whole view; an action
// that changes one row answers with that row (placed under the table's
// heading), not the table; a later look after the page changed one row
// by itself is small and names that row; a look with nothing changed
// says so in one line; full:true and a navigation give the whole view
// again.
func TestMCPViewScopedToChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	var escalate atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /long.html", htmlPage(func() string { return longTablePage() }))
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		if escalate.Load() {
			io.WriteString(w, "escalate")
		}
	})
	site := serveAt(t, "127.0.0.1", mux)
	pp := startPlingProcess(t, buildPling(t), nil, "mcp", site+"/long.html")
	mustCall := func(t *testing.T, name string, args map[string]any) string {
		t.Helper()
		out, res := pp.call(t, name, args)
		if res.IsError {
			t.Fatalf("%s %v failed: %s", name, args, out)
		}
		return out
	}
	whole := func(t *testing.T, what, out string) {
		t.Helper()
		if !strings.HasPrefix(out, "View (") || !strings.Contains(out, `"T-1"`) || !strings.Contains(out, `"T-100"`) || len(out) < 2500 {
			t.Errorf("%s is not the whole view (%d bytes):\n%.600s", what, len(out), out)
		}
	}

	first := mustCall(t, "browser.view", nil)
	whole(t, "the first look", first)
	out := mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, first, "button", "Close T-7")})
	if !strings.Contains(out, `"T-7" | "closed"`) || !strings.Contains(out, `@ heading "Tickets"`) || strings.Contains(out, `"T-8"`) || len(out) > 600 {
		t.Errorf("the click's result is not the one row it changed, under its heading (%d bytes):\n%.1200s", len(out), out)
	}

	escalate.Store(true)
	mustCall(t, "browser.act", map[string]any{"do": "wait", "text": "escalated"})
	second := mustCall(t, "browser.view", nil)
	if !strings.HasPrefix(second, "View changes since your last look") || !strings.Contains(second, `"T-42" | "escalated"`) ||
		strings.Contains(second, `"T-41"`) || strings.Contains(second, `"T-7"`) || len(second) > 500 {
		t.Errorf("the second look is not the one row that changed (%d bytes, the first %d):\n%.1200s", len(second), len(first), second)
	}
	t.Logf("the first look: %d bytes; the click's result: %d; the second look: %d", len(first), len(out), len(second))
	if third := mustCall(t, "browser.view", nil); !strings.HasPrefix(third, "Nothing changed since your last look") || len(third) > 100 {
		t.Errorf("a look with nothing changed:\n%.600s", third)
	}
	whole(t, "a look with full:true", mustCall(t, "browser.view", map[string]any{"full": true}))

	mustCall(t, "browser.open", map[string]any{"url": "/long.html"})
	whole(t, "the first look after a navigation", mustCall(t, "browser.view", nil))
}
