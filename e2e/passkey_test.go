package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// passkeyProblem is what the approval screen says went wrong: the
// authority's refusal (#problem) or the screen's script's, when the
// browser gave no assertion (#passkey-problem); "" while neither shows.
const passkeyProblem = `(() => {
  const a = document.getElementById("problem"), b = document.getElementById("passkey-problem");
  return (a && a.textContent) || (b && !b.hidden && b.textContent) || "";
})()`

// TestPasskeyApprovalInBrowser: the site requires the person's passkey
// for refunds (authority.PasskeyConfig, at the authority). In Chromium
// with DevTools' virtual authenticator (ctap2, internal, resident keys,
// user verification), the person registers a passkey on the authority's
// screen; a post of the approval form without an assertion, sent from the
// authority's own screen with its CSRF token, is refused, and so is the
// person's Approve while the authenticator does not verify them: nothing
// runs. With the user-verified assertion the refund runs.
func TestPasskeyApprovalInBrowser(t *testing.T) {
	var authOrigin string
	site, ctx := startAuthoritySiteWith(t, func(c *authority.Config, ln net.Listener) {
		// localhost, not 127.0.0.1: an IP address is no WebAuthn
		// relying party id; both are secure contexts.
		authOrigin = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
		// The site's refunds need the person's passkey.
		c.Passkeys = authority.PasskeyConfig{Origin: authOrigin, Approvals: map[string][]string{}}
		for aud := range c.Audiences {
			c.Passkeys.Approvals[aud] = []string{"refund@*"}
		}
		// The site's login in front of the authority names the person.
		c.ScreenSubject = func(*http.Request) (string, bool) { return authoritytest.Subject, true }
	})
	origin := site.origin
	sess := site.auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "agent-1"})
	bctx, devTools := launchBrowser(t, ctx)
	p := openTab(t, ctx, devTools, origin+"/orders/?approvals=authority", 20*time.Second)
	tb := &tab{t: t, pageConn: &pageConn{page: p, ctx: p.Context(), agent: agent.New(p, agent.WithSession(sess.Token), agent.WithIDPrefix("e2e-passkey"))}}
	orders := refundable(t, tb, 2)
	pill := func(id string) string {
		return eval[string](tb, `document.querySelector('#rows .row[data-order="`+id+`"] .pill').textContent`)
	}
	seen := map[string]bool{}
	status := func(id string) string {
		t.Helper()
		code, out := authoritytest.Call(t, site.auth.URL, http.MethodGet, "/v1/approvals/"+id, site.auth.OperatorKey, nil)
		if code != http.StatusOK {
			t.Fatalf("GET the approval: HTTP %d %v", code, out)
		}
		return out["status"].(string)
	}
	// The person's browser has a virtual authenticator that verifies them.
	person := newPasskeyPerson(t, bctx, authOrigin+authority.PasskeysPath)

	t.Run("the person registers a passkey on the authority's screen", func(t *testing.T) {
		person.do(t, "register", chromedp.Navigate(authOrigin+authority.PasskeysPath), chromedp.WaitVisible(chromedp.CSS("#register")),
			chromedp.Click(chromedp.CSS("#register")), chromedp.WaitVisible(chromedp.CSS("#done")))
		sctx, cancel := context.WithTimeout(bctx, waitLimit)
		defer cancel()
		creds, err := chromedp.Call(sctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: person.authenticator})
		if err != nil || len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential {
			t.Fatalf("the authenticator holds %+v (%v), want one resident credential", creds, err)
		}
	})

	t.Run("without a user-verified assertion nothing is approved and nothing runs", func(t *testing.T) {
		tb := tb.on(t)
		before := pill(orders[0].ID)
		res := tb.refundAsync(orders[0].ID, "damaged")
		id := approvalLinkID(t, tb, seen)
		person.do(t, "open the screen", chromedp.Navigate(authOrigin+authority.ApprovalPath+"?id="+id), chromedp.WaitVisible(chromedp.CSS("#passkey-needed")))
		// The approve form posted from the screen itself, with its CSRF
		// token and the person's cookie, but no assertion.
		person.eval(t, `(() => {
  const f = document.querySelector("form[data-passkey-get]"), g = document.createElement("form");
  g.method = "post"; g.action = f.action;
  for (const [k, v] of Object.entries({ id: f.elements.id.value, csrf: f.elements.csrf.value, decision: "approve" })) {
    const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; g.appendChild(i);
  }
  document.body.appendChild(g); g.submit(); return "sent";
})()`)
		if got := person.waitProblem(t); !strings.Contains(got, "needs your passkey") {
			t.Errorf("a post without an assertion: the screen says %q, want the passkey named", got)
		}
		if got := status(id); got != "pending" {
			t.Errorf("after the forged post the approval is %s", got)
		}
		yes := true
		for _, c := range []struct {
			name string
			set  func(on bool)
			// authority: the assertion reaches the authority, which
			// refuses it (else the browser gives none).
			authority bool
		}{
			{"the authenticator does not verify the person", func(on bool) { person.setVerified(t, !on) }, false},
			{"the assertion's UV flag is clear", func(on bool) {
				person.override(t, webauthn.SetResponseOverrideBitsParams{IsBadUV: map[bool]*bool{true: &yes}[on]})
			}, true},
			{"the assertion's signature is bogus", func(on bool) {
				person.override(t, webauthn.SetResponseOverrideBitsParams{IsBogusSignature: map[bool]*bool{true: &yes}[on]})
			}, true},
		} {
			c.set(true)
			person.do(t, c.name, chromedp.Navigate(authOrigin+authority.ApprovalPath+"?id="+id), chromedp.WaitVisible(chromedp.CSS("#approve")),
				chromedp.Click(chromedp.CSS("#approve")))
			got := person.waitProblem(t)
			t.Logf("%s: the screen says %q", c.name, got)
			if c.authority && !strings.Contains(got, "needs your passkey") {
				t.Errorf("%s: the screen says %q, want the authority's refusal", c.name, got)
			}
			if got := status(id); got != "pending" {
				t.Errorf("%s: the approval is %s after Approve", c.name, got)
			}
			c.set(false)
		}
		person.answer(t, authOrigin+authority.ApprovalPath+"?id="+id, "deny")
		wantCode(t, tb.outcome(res).err, perr.PermissionDenied)
		if got := pill(orders[0].ID); got != before {
			t.Errorf("row %s shows %q, want %q", orders[0].ID, got, before)
		}
	})

	t.Run("the person's user-verified passkey approves and the refund runs", func(t *testing.T) {
		tb := tb.on(t)
		res := tb.refundAsync(orders[1].ID, "damaged")
		id := approvalLinkID(t, tb, seen)
		person.answer(t, authOrigin+authority.ApprovalPath+"?id="+id, "approve")
		tb.succeeded(res, "refund after the passkey approved")
		if got := pill(orders[1].ID); !strings.Contains(strings.ToLower(got), "refunded") {
			t.Errorf("row %s shows %q after the refund", orders[1].ID, got)
		}
	})
}

// passkeyPerson is the person's tab in the test's browser, with DevTools'
// virtual authenticator (ctap2, internal, resident keys, user
// verification) that verifies them until told otherwise.
type passkeyPerson struct {
	personTab
	authenticator webauthn.AuthenticatorID
}

// newPasskeyPerson opens url in the person's tab and adds the
// authenticator there.
func newPasskeyPerson(t *testing.T, bctx context.Context, url string) *passkeyPerson {
	t.Helper()
	p := &passkeyPerson{personTab: personTab{bctx}}
	p.do(t, "open the authority", chromedp.Navigate(url))
	sctx, cancel := context.WithTimeout(bctx, waitLimit)
	defer cancel()
	if _, err := chromedp.Call(sctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	va, err := chromedp.Call(sctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
		HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatal(err)
	}
	p.authenticator = va.AuthenticatorID
	return p
}

// waitProblem waits for the screen to show a refusal, and returns it.
func (p *passkeyPerson) waitProblem(t *testing.T) string {
	t.Helper()
	// Polled across the form's navigation (an evaluation during it
	// fails and is tried again).
	for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		sctx, cancel := context.WithTimeout(p.ctx, time.Second)
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](passkeyProblem))
		cancel()
		if err == nil && v != "" {
			return v
		}
	}
	t.Fatal("the screen showed no refusal")
	return ""
}

// setVerified says whether the authenticator verifies the person.
func (p *passkeyPerson) setVerified(t *testing.T, v bool) {
	t.Helper()
	sctx, cancel := context.WithTimeout(p.ctx, waitLimit)
	defer cancel()
	if _, err := chromedp.Call(sctx, webauthn.SetUserVerified, webauthn.SetUserVerifiedParams{AuthenticatorID: p.authenticator, IsUserVerified: v}); err != nil {
		t.Fatal(err)
	}
}

// override sets what the authenticator's next responses get wrong.
func (p *passkeyPerson) override(t *testing.T, o webauthn.SetResponseOverrideBitsParams) {
	t.Helper()
	sctx, cancel := context.WithTimeout(p.ctx, waitLimit)
	defer cancel()
	o.AuthenticatorID = p.authenticator
	if _, err := chromedp.Call(sctx, webauthn.SetResponseOverrideBits, o); err != nil {
		t.Fatal(err)
	}
}
