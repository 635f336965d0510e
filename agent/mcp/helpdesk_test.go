package mcp_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/helpdesk"
	"github.com/pling-go/pling/plinghttp"
)

// helpdeskSession serves the help desk (internal/helpdesk) and starts a
// browsing session on start, bridged as pling mcp bridges it, with the
// official SDK's client. It skips as demoSession does.
func helpdeskSession(t *testing.T, start string) (*session, string) {
	t.Helper()
	d := browserDist(t)
	h, err := helpdesk.New(os.DirFS(d), plinghttp.WithBrotli(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	s, _ := browse(t, hs.URL, start)
	return s, hs.URL
}

// agentRun is a scripted agent's run: every call it made, and the bytes
// of every answer it read.
type agentRun struct {
	t     *testing.T
	s     *session
	calls []string
	bytes int
}

// do calls a tool the way a task needs it to go: a failure fails the
// task (the task must finish on the first try), and want must be in the
// text.
func (a *agentRun) do(name string, args map[string]any, want ...string) string {
	a.t.Helper()
	res := call(a.t, a.s, name, args)
	raw, _ := json.Marshal(res)
	a.bytes += len(raw)
	a.calls = append(a.calls, name)
	txt := text(res)
	if res.IsError {
		a.t.Fatalf("%s %v failed (the task did not finish on the first try):\n%s", name, args, txt)
	}
	for _, w := range want {
		if !strings.Contains(txt, w) {
			a.t.Fatalf("%s %v: the text lacks %q:\n%s", name, args, w, txt)
		}
	}
	return txt
}

// link finds a link of the page in browser.page's text by its text, as
// an agent reads it: "Customers -> /customers/".
func link(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(`"`+name+`"`) + ` -> "([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no link %q on the page:\n%s", name, page)
	}
	return m[1]
}

// statesValue reads a state's JSON value from browser.page's "States:"
// line.
func stateValue(t *testing.T, page, key string, v any) {
	t.Helper()
	for _, l := range strings.Split(page, "\n") {
		rest, ok := strings.CutPrefix(l, "States: ")
		if !ok {
			continue
		}
		i := strings.Index(rest, `"`+key+`"=`)
		if i < 0 {
			break
		}
		d := json.NewDecoder(strings.NewReader(rest[i+len(key)+3:]))
		if err := d.Decode(v); err != nil {
			t.Fatalf("state %s: %v in %q", key, err, rest)
		}
		return
	}
	t.Fatalf("no state %s on the page:\n%s", key, page)
}

// The help desk's tasks, as a scripted agent does them through the
// bridge pling mcp runs: each finishes on the first try — no call of a
// task fails, and each ends with the evidence the page confirmed. The
// agent starts on the ticket list and reaches the other pages by the
// links browser.page lists, reads states before acting, and is told
// when an action navigated.
func TestHelpdeskTasks(t *testing.T) {
	s, base := helpdeskSession(t, "/tickets/")
	waitTools(t, s, "close__ticket", true)
	a := &agentRun{t: t, s: s}
	start := time.Now()

	page := a.do("browser.page", nil, "Speaks Pling", "States: ", `"tickets.open"=`, `"T-1001 · `, "Links: ", `"Customers" -> "/customers/"`)
	var open int
	stateValue(t, page, "tickets.open", &open)

	t.Run("close a ticket found by search", func(t *testing.T) {
		a.t = t
		a.do("tickets_search", map[string]any{"query": "T-1042"}, "Done: tickets.search")
		a.do("close__ticket", map[string]any{"record": "T-1042"}, "Done: close@ticket on t1042", "tickets.open decrease met")
	})
	t.Run("reply on the ticket's page", func(t *testing.T) {
		a.t = t
		a.do("tickets_search", map[string]any{"query": "T-1044"}, "Done: tickets.search")
		txt := a.do("open__ticket", map[string]any{"record": "T-1044"}, "The page went to "+base+"/tickets/view.html?id=t1044", "ticket_reply")
		if strings.Contains(txt, "close__ticket") {
			t.Errorf("the ticket list's tools are still listed after the navigation:\n%s", txt)
		}
		// The ticket's page: its states and its guide, before acting.
		a.do("browser.page", nil, `"ticket.status"="open"`, `Guides (point the person at them): "The reply box" ("ticket.reply")`, `Links: "Tickets" -> "/tickets/"`)
		a.do("ticket_reply", map[string]any{"message": "We are on it; expect news today."}, "ticket.replies increase met")
	})
	t.Run("escalate through the dialog", func(t *testing.T) {
		a.t = t
		a.do("ticket_escalate", nil, "Done: ticket.escalate")
		a.do("escalation_confirm", map[string]any{"reason": "The customer cannot work"}, `ticket.priority equal "urgent" met`)
	})
	t.Run("add a customer", func(t *testing.T) {
		a.t = t
		a.do("browser.open", map[string]any{"url": link(t, page, "Customers")}, "customers_add")
		a.do("customers_add", map[string]any{"name": "Grace Hopper", "email": "grace@example.com"}, "customers.count increase met")
	})
	t.Run("change one setting", func(t *testing.T) {
		a.t = t
		admin := a.do("browser.open", map[string]any{"url": link(t, page, "Settings")}, "settings_save", "States: ", `"settings"=`)
		// A form whose inputs are all prefilled (by the page's script) and
		// required: the agent sees the current values
		// and changes one field in one call, inventing none of the rest.
		var before map[string]any
		stateValue(t, admin, "settings", &before)
		a.do("settings_save", map[string]any{"slaHours": 48}, "Done: settings.save")
		after := a.do("browser.page", nil)
		var got map[string]any
		stateValue(t, after, "settings", &got)
		if got["slaHours"] != float64(48) || got["teamName"] != before["teamName"] || got["signature"] != before["signature"] {
			t.Errorf("settings after the save: %v, before %v", got, before)
		}
	})
	a.t = t
	t.Logf("help desk tasks: %d calls, %d bytes read, %v: %s", len(a.calls), a.bytes, time.Since(start).Round(time.Millisecond), strings.Join(a.calls, " "))
	if open == 0 {
		t.Errorf("tickets.open read as 0 before acting")
	}
}

// On the help desk, what an agent gets wrong is answered with the page's
// reason and the one next step: a closed ticket's close is unavailable
// with "already closed" (evaluated for that row), a reply the page's
// script refuses carries the page's own message, and a call of a tool
// whose capability is gone says so instead of "unknown tool".
func TestHelpdeskFailuresSayWhy(t *testing.T) {
	s, _ := helpdeskSession(t, "/tickets/")
	waitTools(t, s, "close__ticket", true)
	call(t, s, "tickets_search", map[string]any{"query": "T-1001"})
	res := call(t, s, "close__ticket", map[string]any{"record": "T-1001"})
	if txt := text(res); !res.IsError || !strings.HasPrefix(txt, `ACTION_UNAVAILABLE: From the page: "The ticket is already closed".`) || strings.Contains(txt, "gate") {
		t.Errorf("close of a closed ticket: %s", txt)
	}
	call(t, s, "tickets_search", map[string]any{"query": "T-1003"})
	res = call(t, s, "open__ticket", map[string]any{"record": "T-1003"})
	if res.IsError {
		t.Fatalf("open: %s", text(res))
	}
	res = call(t, s, "ticket_reply", map[string]any{"message": "ok"})
	if txt := text(res); !res.IsError || !strings.Contains(txt, "A reply needs at least 10 characters.") || strings.Contains(txt, "Observe the page") {
		t.Errorf("a reply the page refuses: %s", txt)
	}
	// close__ticket belonged to the list page: called here, it is not
	// a JSON-RPC "unknown tool" error but a result that says what to do.
	res = call(t, s, "close__ticket", map[string]any{"record": "T-1003"})
	if txt := text(res); !res.IsError || !strings.HasPrefix(txt, "TOOL_NOT_OFFERED: close__ticket (close@ticket) is not offered on the page the tab shows now; nothing was sent.") || !strings.Contains(txt, "Next: call browser.page") {
		t.Errorf("a tool of the page the tab left: %s", txt)
	}
}
