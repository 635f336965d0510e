package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/browsertest"
)

// The person's side of the default approval and handoff dialog: whether
// it is shown, whether it is gone, and a real click on its buttons. These
// three helpers are the only places these tests touch the dialog's markup,
// so a change to the default UI (a closed shadow root, say) is adapted
// here.

// dialogShown waits until the dialog is shown: the approval dialog in its
// closed shadow root (person_test.go), the handoff dialog in the page.
func dialogShown(tb *tab, dialog string) {
	tb.t.Helper()
	if dialog == approvalHost {
		tb.approval()
		return
	}
	tb.do(chromedp.WaitVisible(chromedp.CSS(dialog)))
}

// dialogGone waits until the dialog is gone.
func dialogGone(tb *tab, dialog string) {
	tb.t.Helper()
	tb.do(chromedp.WaitNotPresent(chromedp.CSS(dialog)))
}

// personAnswers plays the person at the default approval or handoff
// dialog: a real, trusted click (CDP input) on its yes or no button. It
// reports whether the dialog was there to answer.
func personAnswers(tb *tab, dialog string, yes bool) bool {
	tb.t.Helper()
	if !eval[bool](tb, `!!document.querySelector("`+dialog+`")`) {
		return false
	}
	button := answerNo
	if yes {
		button = answerYes
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	// The dialog may close between the check and the click (the runtime
	// stopped waiting): that is no answer, not a failure.
	if dialog != approvalHost {
		return chromedp.Do(ctx, chromedp.Click(chromedp.CSS(dialog+button))) == nil
	}
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(approvalHost), chromedp.Populate(-1, true)))
	if err != nil || len(nodes) == 0 {
		return false
	}
	nodes[0].RLock()
	roots := nodes[0].ShadowRoots
	nodes[0].RUnlock()
	if len(roots) == 0 {
		return false
	}
	btn := chromedp.CSS(strings.TrimSpace(button))
	if yes { // Approve is inert for a moment after the dialog appears
		if chromedp.Do(ctx, chromedp.WaitEnabled(btn, chromedp.FromNode(roots[0]))) != nil {
			return false
		}
	}
	return chromedp.Do(ctx, chromedp.Click(btn, chromedp.FromNode(roots[0]))) == nil
}

// openWithTimeout opens path like browserSite.open, with the transport's
// own request timeout set to timeout.
func (s *browserSite) openWithTimeout(t *testing.T, path string, timeout time.Duration) *tab {
	t.Helper()
	p := openTab(t, t.Context(), s.remote, s.url+path, timeout)
	return &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithIDPrefix("e2e"))}}
}

// TestAgentWaitsForThePerson checks the agent's deadlines against the
// page's: an approval outlives the transport's own request timeout, and a
// call the agent gave up on is cancelled in the page, so nothing runs after
// the agent was told it failed.
func TestAgentWaitsForThePerson(t *testing.T) {
	site := startBrowserSite(t, dist(t), http.NewServeMux())
	rowStatus := func(tb *tab, id string) string {
		return eval[string](tb, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
	}

	t.Run("approval-outlives-the-transport-timeout", func(t *testing.T) {
		// The transport gives up on a silent page after 2 s; the page
		// says a person is asked for up to 5 minutes, so the agent waits.
		tb := site.openWithTimeout(t, "/orders/", 2*time.Second)
		id := refundable(t, tb, 1)[0].ID
		var waits []agent.Waiting
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
		defer cancel()
		res := make(chan invokeOutcome, 1)
		go func() {
			r, err := tb.agent.Invoke(ctx, "refund@order", map[string]any{"record": id, "reason": "damaged"},
				agent.OnWaiting(func(w agent.Waiting) { waits = append(waits, w) }))
			res <- invokeOutcome{res: r, err: err}
		}()
		dialogShown(tb, approvalHost)
		time.Sleep(4 * time.Second) // the person takes longer than the transport's 2 s
		if !personAnswers(tb, approvalHost, true) {
			t.Fatal("the approval dialog was gone before the person answered")
		}
		o := tb.succeeded(res, "refund")
		if got := rowStatus(tb, id); got != "refunded" {
			t.Errorf("row %s shows %q, want refunded", id, got)
		}
		if len(waits) != 1 || waits[0].Kind != "approval" || waits[0].RequestID != o.res.RequestID || waits[0].Timeout != 5*time.Minute {
			t.Errorf("waiting notices %+v, want one approval of request %s for 5m", waits, o.res.RequestID)
		}
	})

	t.Run("agent-gives-up-before-the-person-approves", func(t *testing.T) {
		tb := site.openWithTimeout(t, "/orders/", 20*time.Second)
		id := refundable(t, tb, 1)[0].ID
		before := rowStatus(tb, id)
		// The agent's own deadline: 3 s, far less than the page would wait.
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		res := make(chan invokeOutcome, 1)
		go func() {
			r, err := tb.agent.Invoke(ctx, "refund@order", map[string]any{"record": id, "reason": "late"})
			res <- invokeOutcome{res: r, err: err}
		}()
		dialogShown(tb, approvalHost)
		o := tb.outcome(res)
		if o.err == nil {
			t.Fatalf("the invoke succeeded before anyone approved: %+v", o.res)
		}
		t.Logf("the agent was told: %v", o.err)
		// The person's Approve comes after the agent gave up.
		clicked := personAnswers(tb, approvalHost, true)
		time.Sleep(time.Second)
		if got := rowStatus(tb, id); got != before {
			t.Errorf("row %s shows %q after the agent gave up (clicked %v), want %q: the refund ran after the agent was told it failed", id, got, clicked, before)
		}
		dialogGone(tb, approvalHost)
		// What the agent was told matches: the page refused the withdrawn
		// call, nothing ran.
		be := wantCode(t, o.err, perr.PermissionDenied)
		if be.Details["cancelled"] != true {
			t.Errorf("details %v, want cancelled: true", be.Details)
		}
	})

	t.Run("agent-gives-up-during-a-handoff", func(t *testing.T) {
		tb := site.openWithTimeout(t, "/shop/", 20*time.Second)
		tb.mustInvoke("cart.add", map[string]any{"sku": "pack-20", "qty": 1})
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		_, err := tb.agent.Invoke(ctx, "checkout", nil)
		wantCode(t, err, perr.HandoffCancelled)
		dialogGone(tb, handoffDialog)
	})
}

// TestBrowserGone kills the browser under an open page: the next call
// says plainly that the browser is gone and that nothing was sent.
func TestBrowserGone(t *testing.T) {
	d := dist(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hs := httptest.NewServer(demoSite(t, ctx, d, demosite.Options{}))
	t.Cleanup(hs.Close)
	ts := hs.URL
	before := browsertest.Children()
	octx, ocancel := context.WithTimeout(ctx, time.Minute)
	defer ocancel()
	p, err := cdp.Open(octx, ts+"/shop/", cdp.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := agent.New(p)
	if _, err := c.Describe(octx, nil); err != nil {
		t.Fatal(err)
	}
	browsertest.Kill(t, before)
	// The call comes after the transport has seen the browser die: a call
	// in flight while it dies is honestly unconfirmed (the browser may
	// have run it), which is another test's case.
	select {
	case <-p.Gone():
	case <-time.After(30 * time.Second):
		t.Fatal("Page.Gone is not closed 30 s after the browser was killed")
	}

	_, err = c.Invoke(octx, "cart.add", map[string]any{"sku": "pack-20"})
	if err == nil {
		t.Fatal("invoke succeeded with the browser dead")
	}
	msg := err.Error()
	if errors.Is(err, agent.ErrUnconfirmed) || !strings.Contains(msg, "browser is gone") || !strings.Contains(msg, "not sent") {
		t.Errorf("error %q: want one saying the browser is gone and nothing was sent, not an unconfirmed call", msg)
	}
	var ns *agent.NotSentError
	if !errors.As(err, &ns) {
		t.Errorf("error %T is not an *agent.NotSentError", err)
	}
}
