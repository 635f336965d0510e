package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// screenAttack is what a script of the site's pages does with a known
// approval id or user code: it fetches the screen at the site's own path
// (same origin: the person's cookies go along) and at the authority's,
// takes the form's id and CSRF token from the HTML it read, and posts
// Approve with every scope it saw, with the person's credentials; then it
// posts blind (no-cors) with a made-up token. It reports what it got.
const screenAttack = `(async (paths, authority, extra) => {
  const out = [];
  for (const u of paths) {
    try {
      const r = await fetch(u, { credentials: "include" });
      const html = await r.text();
      const id = (html.match(/name="id" value="([^"]*)"/) || [])[1] || "";
      const csrf = (html.match(/name="csrf" value="([^"]*)"/) || [])[1] || "";
      out.push(u + ": read " + r.status + (csrf ? " with a token" : " without a token"));
      const form = new URLSearchParams({ id, csrf, decision: "approve" });
      for (const s of html.matchAll(/name="scope" value="([^"]*)"/g)) form.append("scope", s[1]);
      const action = (html.match(/<form method="post" action="([^"]*)"/) || [])[1];
      const p = await fetch(action ? new URL(action, r.url).href : u, { method: "POST", body: form, credentials: "include" });
      out.push("posted " + p.status);
    } catch (e) { out.push(u + ": refused (" + e.name + ")"); }
  }
  for (const path of ["/approve", "/consent"]) {
    try {
      await fetch(authority + path, { method: "POST", mode: "no-cors", credentials: "include",
        body: new URLSearchParams(Object.assign({ csrf: "made-up", decision: "approve", scope: "*" }, extra)) });
      out.push(path + ": blind post sent");
    } catch (e) { out.push(path + ": blind post refused (" + e.name + ")"); }
  }
  return out.join("; ");
})`

// TestScreensPageScriptCannotDecide: a script of the site's pages cannot
// decide on the screens a person decides on, even in the browser where
// the person opened them. The approval screen: the script reads the
// approval id from the page's link (pling:waiting), fetches the screen and
// posts Approve; the refund does not run, and the approval stays pending
// at the authority until the person approves on the authority's screen
// (trusted input through CDP), when it runs once. The consent screen: an
// attacker's agent asks for a delegation with scope *, the script fetches
// the consent screen for its user code and posts Approve with every
// scope; the delegation stays pending and no token is issued.
func TestScreensPageScriptCannotDecide(t *testing.T) {
	site, ctx := startAuthoritySite(t)
	origin, authURL := site.origin, site.auth.URL
	token := site.auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "agent-1"}).Token
	bctx, devTools := launchBrowser(t, ctx)
	p := openTab(t, ctx, devTools, origin+"/orders/?approvals=authority", 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithSession(token), agent.WithIDPrefix("e2e-screens"))}}
	orders := refundable(t, tb, 1)
	operator := func(path string) map[string]any {
		t.Helper()
		code, out := authoritytest.Call(t, authURL, http.MethodGet, path, site.auth.OperatorKey, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d %v", path, code, out)
		}
		return out
	}
	// The person's tab has opened a screen before: the browser holds the
	// screens' cookie, which a forged post would carry.
	person := func(u, answer string) {
		t.Helper()
		personTab{bctx}.answer(t, u, answer)
	}

	t.Run("approval", func(t *testing.T) {
		tb := tb.on(t)
		res := tb.refundAsync(orders[0].ID, "damaged")
		id := approvalLinkID(t, tb, nil)
		sctx, scancel := context.WithTimeout(bctx, waitLimit)
		if err := chromedp.Do(sctx, chromedp.Navigate(origin+demosite.ApprovalPath+"?id="+id), chromedp.WaitVisible(chromedp.CSS("#approve"))); err != nil {
			t.Fatalf("the person opens the screen: %v", err)
		}
		scancel()
		got := eval[string](tb, screenAttack+`(["`+demosite.ApprovalPath+`?id=`+id+`", "`+authURL+`/approve?id=`+id+`"], "`+authURL+`", {id: "`+id+`"})`)
		t.Logf("the page script: %s", got)
		select {
		case o := <-res:
			t.Fatalf("the refund answered before the person decided: %+v", o)
		case <-time.After(2 * time.Second):
		}
		if st := operator("/v1/approvals/" + id)["status"]; st != "pending" {
			t.Fatalf("after the page script the approval is %v, want pending", st)
		}
		person(origin+demosite.ApprovalPath+"?id="+id, "approve")
		o := tb.succeeded(res, "refund after the person approved")
		if o.res.Evidence == nil || o.res.Evidence.Approval != "approved" {
			t.Errorf("evidence %+v, want approval approved", o.res.Evidence)
		}
	})

	t.Run("consent", func(t *testing.T) {
		tb := tb.on(t)
		pd, err := agent.RequestDelegation(ctx, authURL, agent.DelegationRequest{Audience: origin, Scope: []string{"*"},
			TTL: 10 * time.Minute, Agent: "attacker"})
		if err != nil {
			t.Fatal(err)
		}
		got := eval[string](tb, screenAttack+`(["`+demosite.ConsentPath+`?code=`+pd.UserCode+`", "`+authURL+`/consent?code=`+pd.UserCode+`"], "`+authURL+`", {})`)
		t.Logf("the page script: %s", got)
		id, _ := operator("/v1/delegations?userCode=" + pd.UserCode)["id"].(string)
		if st := operator("/v1/delegations/" + id)["status"]; st != "pending" {
			t.Fatalf("after the page script the delegation is %v, want pending", st)
		}
		wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
		d, err := pd.Wait(wctx)
		wcancel()
		if d != nil || err == nil {
			t.Fatalf("the attacker's agent collected a token: %+v", d)
		}
		person(origin+demosite.ConsentPath+"?code="+pd.UserCode, "deny")
		var de *agent.DelegationError
		if _, err := pd.Wait(ctx); !errors.As(err, &de) || de.Code != perr.DelegationRevoked {
			t.Errorf("after the person denied, Wait: %v", err)
		}
	})
}

// TestApprovalRewrittenRequest: a script of the page wraps fetch and
// rewrites what the module sends the authority for an approval, so that
// the screen names another order (and, in the page's words, says no money
// moves). The person approves what the screen shows; the authority signs
// the binding of what it showed, which is not the request the page runs:
// the refund is refused and neither order changes.
func TestApprovalRewrittenRequest(t *testing.T) {
	site, ctx := startAuthoritySite(t)
	origin := site.origin
	token := site.auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "agent-1"}).Token
	bctx, devTools := launchBrowser(t, ctx)
	p := openTab(t, ctx, devTools, origin+"/orders/?approvals=authority", 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithSession(token), agent.WithIDPrefix("e2e-rewrite"))}}
	orders := refundable(t, tb, 2)
	target, decoy := orders[0].ID, orders[1].ID
	pill := func(id string) string {
		return eval[string](tb, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
	}
	before := map[string]string{target: pill(target), decoy: pill(decoy)}
	eval[bool](tb, `(() => {
  const orig = window.fetch;
  window.fetch = function (url, init) {
    if (/\/v1\/approvals$/.test(String(url)) && init && typeof init.body === "string") {
      const b = JSON.parse(init.body);
      if (b.request && b.request.input) b.request.input.record = "`+decoy+`";
      if (b.request) b.request.summary = "Approve order `+decoy+`: no money moves";
      if (b.challenge) {
        if (b.challenge.record) b.challenge.record.id = "`+decoy+`";
        b.challenge.summary = "Approve order `+decoy+`: no money moves";
        b.challenge.title = "Approve order";
      }
      init = Object.assign({}, init, { body: JSON.stringify(b) });
    }
    return orig.call(this, url, init);
  };
  return true;
})()`)
	res := tb.refundAsync(target, "damaged")
	id := approvalLinkID(t, tb, nil)
	sctx, scancel := context.WithTimeout(bctx, waitLimit)
	defer scancel()
	err := chromedp.Do(sctx, chromedp.Navigate(origin+demosite.ApprovalPath+"?id="+id), chromedp.WaitVisible(chromedp.CSS("#approve")))
	shown := ""
	if err == nil {
		shown, err = chromedp.Run(sctx, chromedp.TextContent(chromedp.CSS("#challenge")))
	}
	if err != nil {
		t.Fatalf("the person opens the screen: %v", err)
	}
	t.Logf("the screen shows: %q", shown)
	if !strings.Contains(shown, decoy) || strings.Contains(shown, target) {
		t.Fatalf("the screen shows %q: want the rewritten order %s, not %s (the test's rewrite did not take)", shown, decoy, target)
	}
	if err := chromedp.Do(sctx, chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("the person approves: %v", err)
	}
	o := tb.outcome(res)
	if o.err == nil {
		t.Fatalf("the refund of %s ran on an approval the person gave for %s", target, decoy)
	}
	wantCode(t, o.err, perr.PermissionDenied)
	for rec, was := range before {
		if got := pill(rec); got != was {
			t.Errorf("row %s shows %q, want %q", rec, got, was)
		}
	}
}

// approvalLinkID waits (up to waitLimit) for the page to link the
// authority's approval screen, and gives the approval's id from the link.
// With seen, an id already in it is passed over (the page still links an
// earlier approval), and the one given is added.
func approvalLinkID(t *testing.T, tb *tab, seen map[string]bool) string {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		href := eval[string](tb, `(document.querySelector("#pling-approval-link a") || {href: ""}).href`)
		if i := strings.Index(href, "?id="); i >= 0 && !seen[href[i+4:]] {
			if seen != nil {
				seen[href[i+4:]] = true
			}
			return href[i+4:]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never linked a new approval (last %q)", href)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
