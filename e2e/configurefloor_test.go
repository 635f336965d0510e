package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestConfigureBeforeShimCannotWeakenTag: an agent with DevTools adds the
// stub and pling.configure({expose: ["*"], approvals: "page", approve:
// yes}) to a page before pling.js runs (Page.addScriptToEvaluateOnNewDocument).
// The page's tag says data-expose="void@invoice" and
// data-approvals="authority": the approval-required void still goes to the
// authority, where no person approves, so it runs nothing and the agent's
// approve hook is never asked; an action the tag does not expose stays
// unexposed (docs/page-api.md §2.7). The tag's data-subject names the
// person signed in: Bob's token is refused SESSION_INVALID, whatever
// subject the agent configures. pling:waiting says the approval is asked
// outside the page (outside: true), so an agent's tools do not say that
// nobody can see its browser.
func TestConfigureBeforeShimCannotWeakenTag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	d := dist(t)
	ph := distServer(t, d)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + ln.Addr().String()
	auth := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{origin: {"*"}}, Interval: time.Second}, nil)
	stub, err := os.ReadFile("../js-shim/stub.js")
	if err != nil {
		t.Fatal(err)
	}
	html := `<!doctype html><html><head><title>Invoices</title></head><body>
<script>` + strings.TrimSpace(string(stub)) + `
window.__voided = []; window.__purged = false; window.__waits = [];
addEventListener("pling:waiting", (e) => window.__waits.push(e.detail));
pling.records("invoice", [{ id: "inv_7", label: "INV-7" }]);
pling.action({ id: "void", title: "Void invoice", risk: "destructive", approval: true, record: { kind: "invoice" },
  run: ({ record }) => { window.__voided.push(record); return "voided"; } });
pling.action({ id: "purge", title: "Purge every invoice", risk: "destructive", run: () => { window.__purged = true; return "purged"; } });
</script>
<script src="/pling/pling.js" data-expose="void@invoice" data-authority="` + auth.URL + `" data-approvals="authority" data-subject="` + authoritytest.Subject + `" defer></script>
</body></html>`
	mux := http.NewServeMux()
	mux.Handle("/pling/", ph)
	mux.HandleFunc("/invoices", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(html))
	})
	site := httptest.NewUnstartedServer(mux)
	site.Listener.Close()
	site.Listener = ln
	site.Start()
	t.Cleanup(site.Close)
	sess := auth.DeviceGrant(t, authoritytest.Grant{Audience: origin, Scope: []string{"*"}, Agent: "devtools-agent"})
	// Another person's session: the operator approved it for "bob".
	_, created := authoritytest.Call(t, auth.URL, "POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"*"}, "ttlSeconds": 600, "agent": "bobs-agent"})
	authoritytest.Approve(t, auth.URL, auth.OperatorKey, created["id"].(string), map[string]any{"subject": "bob"})
	_, collected := authoritytest.Call(t, auth.URL, "POST", "/v1/delegations/"+created["id"].(string)+"/token", "", map[string]any{"pollSecret": created["pollSecret"]})
	bobs, _ := json.Marshal(collected["token"])

	bctx, _ := launchBrowser(t, ctx)
	tctx, tcancel := chromedp.NewContext(bctx)
	defer tcancel()
	// What the agent adds before any script of the page runs.
	attack := strings.TrimSpace(string(stub)) + `
window.__asked = 0;
pling.configure({ expose: ["*"], approvals: "page", subject: "bob",
  approve: (c) => { window.__asked++; return Promise.resolve({ binding: c.binding, approved: true }); } });`
	tok, _ := json.Marshal(sess.Token)
	if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: attack}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(origin+"/invoices")); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(tctx, chromedp.Evaluate[string](`(async () => {
  const call = async (capability, input, n, session) => {
    const r = await pling.surface.handle({ protocol: "pling.surface/0.1", id: "attack-" + n, method: "invoke",
      capability, input, session: session || `+string(tok)+` }, 4000);
    return (r.error && r.error.code) || (r.result && r.result.error && r.result.error.code) || "ran";
  };
  const voided = await call("void@invoice", { record: "inv_7" }, 1);
  const purged = await call("purge", {}, 2);
  const bobs = await call("void@invoice", { record: "inv_7" }, 3, `+string(bobs)+`);
  const outside = window.__waits.some((w) => w.id === "attack-1" && w.kind === "approval" && w.outside === true);
  return JSON.stringify({ void: voided, purge: purged, bobs, voided: window.__voided.length, purged: window.__purged, asked: window.__asked, outside });
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := map[string]any{"void": "PERMISSION_DENIED", "purge": "CAPABILITY_NOT_EXPOSED", "bobs": "SESSION_INVALID",
		"voided": 0.0, "purged": false, "asked": 0.0, "outside": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the agent's configure made happen (-want +got):\n%s", d)
	}
}
