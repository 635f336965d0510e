package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestApprovalBackendInBrowser: approvals outside the page, end to end
// (docs/page-api.md §4.2). The demo orders page runs
// with approvals "authority" and follows a real authority; an agent with
// a delegated session asks for refunds in Chromium. A page script that
// forges clicks, replaces the approval UI and posts to the operator route
// gets nothing through (a person then denies on the authority's screen); a
// person approves on the authority's approval screen and the refund runs; a
// page script that wraps fetch and hands the module a replayed approval,
// or one the authority signed for other input, gets nothing run.
func TestApprovalBackendInBrowser(t *testing.T) {
	site, ctx := startAuthoritySite(t)
	origin, opKey := site.origin, site.auth.OperatorKey
	call := func(method, path, bearer string, body any) map[string]any {
		t.Helper()
		code, out := authoritytest.Call(t, site.auth.URL, method, path, bearer, body)
		if code/100 != 2 {
			t.Fatalf("%s %s: HTTP %d %v", method, path, code, out)
		}
		return out
	}
	// The agent's session: a delegation the operator approves.
	sess := site.auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "agent-1"})
	token := sess.Token

	// One browser: the agent's tab and the person's tab.
	bctx, devTools := launchBrowser(t, ctx)
	p := openTab(t, ctx, devTools, origin+"/orders/?approvals=authority", 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithSession(token), agent.WithIDPrefix("e2e-approval"))}}
	orders := refundable(t, tb, 4)
	pill := func(id string) string {
		return eval[string](tb, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
	}
	// approvalID waits for the page's link to the approval screen (the
	// module fires pling:waiting with the approval's id) and returns it.
	seenIDs := map[string]bool{}
	approvalID := func() string { t.Helper(); return approvalLinkID(t, tb, seenIDs) }
	// person opens the authority's screen for id and answers.
	person := func(id, answer string) {
		t.Helper()
		personTab{bctx}.answer(t, origin+demosite.ApprovalPath+"?id="+id, answer)
	}
	stillWaiting := func(res <-chan invokeOutcome, what string) {
		t.Helper()
		select {
		case o := <-res:
			t.Fatalf("%s: the refund answered before a person decided: %+v", what, o)
		case <-time.After(1500 * time.Millisecond):
		}
	}

	t.Run("a page script that forges a click gets nothing through", func(t *testing.T) {
		tb := tb.on(t)
		before := pill(orders[0].ID)
		res := tb.refundAsync(orders[0].ID, "damaged")
		id := approvalID()
		got := eval[string](tb, `(async () => {
  const out = [];
  out.push("dialogs " + document.querySelectorAll("[data-pling-ui]").length);
  // Every Pling approval button there is (none: no dialog is shown),
  // clicked and sent a made-up trusted click.
  for (const host of document.querySelectorAll("[data-pling-ui]")) {
    host.click();
    host.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    out.push("clicked");
  }
  const fake = { approve: (c) => Promise.resolve({ binding: c.binding, approved: true }) };
  try { Object.defineProperty(window, "__plingUI", { configurable: true, get: () => fake, set() {} }); out.push("ui replaced"); } catch (e) {}
  const r = await fetch("`+site.auth.URL+`/v1/approvals/`+id+`/approve", { method: "POST" }).catch(() => null);
  out.push("operator route " + (r ? r.status : "unreachable"));
  return out.join("; ");
})()`)
		t.Logf("the page script: %s", got)
		if !strings.HasPrefix(got, "dialogs 0") {
			t.Errorf("an in-page dialog was shown with approvals \"authority\": %s", got)
		}
		stillWaiting(res, "forged")
		person(id, "deny")
		wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
		if got := pill(orders[0].ID); got != before {
			t.Errorf("row %s shows %q, want %q", orders[0].ID, got, before)
		}
	})

	// From here a page script wraps fetch: it keeps every approval the
	// module collects and, when told, hands the module another one.
	eval[bool](tb, `(() => {
  window.__seen = []; window.__swap = "";
  const orig = window.fetch;
  window.fetch = async function (url, init) {
    const res = await orig.call(this, url, init);
    if (!/\/v1\/approvals\/[^/]+\/token$/.test(String(url)) || res.status !== 200) return res;
    const j = await res.json();
    if (j.approval) window.__seen.push(j.approval);
    if (window.__swap) j.approval = window.__swap;
    return new Response(JSON.stringify(j), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  return true;
})()`)

	t.Run("a person approves on the authority's screen and the page runs the action", func(t *testing.T) {
		tb := tb.on(t)
		res := tb.refundAsync(orders[1].ID, "damaged")
		id := approvalID()
		stillWaiting(res, "approve")
		sctx, scancel := context.WithTimeout(bctx, waitLimit)
		err := chromedp.Do(sctx, chromedp.Navigate(origin+demosite.ApprovalPath+"?id="+id), chromedp.WaitVisible(chromedp.CSS("#challenge")))
		shown := ""
		if err == nil {
			shown, err = chromedp.Run(sctx, chromedp.TextContent(chromedp.CSS("#challenge")))
		}
		scancel()
		if err != nil || !strings.Contains(shown, "refund@order") || !strings.Contains(shown, "damaged") {
			t.Errorf("the screen shows %q (%v), want the capability and the input", shown, err)
		}
		person(id, "approve")
		o := tb.succeeded(res, "refund after the person approved")
		if o.res.Evidence == nil || o.res.Evidence.Approval != "approved" {
			t.Errorf("evidence %+v, want approval approved", o.res.Evidence)
		}
		if got := pill(orders[1].ID); !strings.Contains(strings.ToLower(got), "refunded") {
			t.Errorf("row %s shows %q after the refund", orders[1].ID, got)
		}
	})

	// An approval the authority signed for this origin but another
	// binding (other input), made beside the page.
	other := call("POST", "/v1/approvals", token, map[string]any{"sessionId": sess.SID, "audience": origin,
		"request": map[string]any{"capability": "refund@order", "input": map[string]any{"record": orders[2].ID, "reason": "other"},
			"session": "sha256:" + strings.Repeat("d", 64), "requestId": "other", "expiresAtMs": time.Now().UnixMilli() + 120_000}})
	call("POST", "/v1/approvals/"+other["id"].(string)+"/approve", opKey, nil)
	otherApproval := call("POST", "/v1/approvals/"+other["id"].(string)+"/token", "", map[string]any{"pollSecret": other["pollSecret"]})["approval"].(string)

	for i, tc := range []struct{ name, swap string }{
		{"a replayed approval is refused", `window.__seen[0]`},
		{"an approval for other input is refused", `"` + otherApproval + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := tb.on(t)
			if !eval[bool](tb, `(() => { window.__swap = `+tc.swap+`; return typeof window.__swap === "string" && window.__swap.startsWith("pa1."); })()`) {
				t.Fatal("the page script holds no approval to hand over")
			}
			rec := orders[2+i].ID
			before := pill(rec)
			res := tb.refundAsync(rec, "late")
			id := approvalID()
			person(id, "approve")
			wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
			if got := pill(rec); got != before {
				t.Errorf("row %s shows %q, want %q", rec, got, before)
			}
		})
	}
}
