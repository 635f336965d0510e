package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
)

// replayPage is a test-only page whose order.place tells the test's server
// it ran, then reloads the page: the invoke is cut off mid-call, as by a
// form that submits and navigates.
const replayPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Replay</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*"></script>
<script>
pling.action({ id: "order.place", title: "Place the order", risk: "write",
  run: async () => {
    await fetch("/test/replay/executed", { method: "POST" });
    location.reload();
    return new Promise(() => {}); // the page goes away first
  } });
pling.action({ id: "order.note", title: "Note the order", risk: "write", run: () => true });
</script></head><body><h1>Replay</h1></body></html>`

// testReplayReload: an id consumed in one tab stays consumed across that
// tab's reload and in a second tab of the origin.
// The executions are counted by the test's own server, which survives
// every reload.
func testReplayReload(t *testing.T, site *browserSite, extra *http.ServeMux) {
	var executed atomic.Int64
	extra.HandleFunc("/test/replay.html", staticPage(replayPage))
	extra.HandleFunc("/test/replay/executed", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			executed.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	a := site.open(t, "/test/replay.html")
	b := site.open(t, "/test/replay.html")
	send := func(tb *tab, id string) error { return tb.invokeAs("order.place", id) }
	// replayed checks that err is REPLAY_DETECTED of an earlier call cut
	// off by the reload (completed: false).
	replayed := func(who string, err error) {
		t.Helper()
		var re *agent.ReplayError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want REPLAY_DETECTED (executions so far: %d)", who, err, executed.Load())
			return
		}
		if re.Previous.Completed {
			t.Errorf("%s: previous %+v, want completed: false (the first call was cut off by the reload)", who, re.Previous)
		}
	}
	// Tab A runs order-1, which reloads tab A mid-invoke.
	eval[bool](a, `(window.__before = true)`)
	if err := send(a, "order-1"); err == nil {
		t.Fatal("order-1 in tab A answered although its page reloaded mid-call")
	}
	a.reloaded()
	if n := executed.Load(); n != 1 {
		t.Fatalf("order-1 ran %d times in tab A, want once", n)
	}
	// The same id again, from the second tab and from tab A after its
	// reload: refused, and order.place does not run again.
	eval[bool](b, `(window.__before = true)`)
	replayed("order-1 resent from tab B", send(b, "order-1"))
	replayed("order-1 resent from tab A after its reload", send(a, "order-1"))
	if n := executed.Load(); n != 1 {
		t.Fatalf("order-1 ran %d times, want exactly once", n)
	}

	// Sent from both tabs at once, round after round: IndexedDB runs one
	// read-write transaction at a time, so one tab consumes each id, and
	// the other sees it consumed.
	const rounds = 5
	for i := range rounds {
		id := fmt.Sprintf("order-%d", i+2)
		eval[bool](a, `(window.__before = true)`)
		eval[bool](b, `(window.__before = true)`)
		type answer struct {
			tb  *tab
			err error
		}
		answers := make(chan answer, 2)
		for _, tb := range []*tab{a, b} {
			go func() { answers <- answer{tb, send(tb, id)} }()
		}
		var replays int
		var ran *tab
		for range 2 {
			ans := <-answers
			var re *agent.ReplayError
			if errors.As(ans.err, &re) {
				replays++
			} else {
				ran = ans.tb
			}
		}
		if n := executed.Load(); n != int64(i+2) || replays != 1 {
			t.Fatalf("%s sent from both tabs at once: %d executions in all (want %d), %d REPLAY_DETECTED (want 1)", id, n, i+2, replays)
		}
		ran.reloaded()
	}
}

// reloaded waits for the tab's new document with window.pling.surface,
// after the test set window.__before in the old one; evaluating fails
// while the old one goes away, so it evaluates afresh each time.
func (tb *tab) reloaded() {
	tb.t.Helper()
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(tb.ctx, time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!window.__before && !!(window.pling && window.pling.surface)`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("the tab did not reload: %v", err)
		}
	}
}

// invokeAs invokes capability with no input under the request id, as an
// agent resending the same intent does.
func (tb *tab) invokeAs(capability, id string) error {
	ctx, cancel := context.WithTimeout(tb.t.Context(), 30*time.Second)
	defer cancel()
	_, err := tb.agent.Invoke(ctx, capability, nil, agent.WithRequestID(id))
	return err
}

// testReplayOutcome: an outcome is written after the answer, carried by
// the tab's next consume or by its flush a moment later, and another tab
// then reads it (completed: true, ok: true).
func testReplayOutcome(t *testing.T, site *browserSite, extra *http.ServeMux) {
	extra.HandleFunc("/test/replay-outcome.html", staticPage(replayPage))
	a := site.open(t, "/test/replay-outcome.html")
	b := site.open(t, "/test/replay-outcome.html")
	send := func(tb *tab, id string) error { return tb.invokeAs("order.note", id) }
	previous := func(err error) string {
		var re *agent.ReplayError
		if !errors.As(err, &re) {
			return fmt.Sprintf("not REPLAY_DETECTED: %v", err)
		}
		return fmt.Sprintf("%+v", re.Previous)
	}
	const done = "{Completed:true OK:true Code:}"
	// Carried: note-2's consume writes note-1's outcome before it answers.
	for _, id := range []string{"note-1", "note-2"} {
		if err := send(a, id); err != nil {
			t.Fatalf("%s in tab A: %v", id, err)
		}
	}
	if got := previous(send(b, "note-1")); got != done {
		t.Errorf("note-1 from tab B after note-2 in tab A: %s, want %s", got, done)
	}
	// Flushed: with no consume after it, note-2's outcome is written on
	// its own.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := previous(send(b, "note-2"))
		if got == done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("note-2 from tab B, 5 s after tab A answered: %s, want %s", got, done)
		}
	}
}
