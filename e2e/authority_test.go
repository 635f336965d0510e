package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/schema"
)

// authorityPage follows the authority at {{AUTHORITY}} (another loopback
// port: every call to it is cross-origin, so its CORS answers matter).
const authorityPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authority</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-authority="{{AUTHORITY}}"></script>
<script>
pling.action({ id: "order.place", title: "Place the order", risk: "write",
  run: async () => { await fetch("/test/authority/executed", { method: "POST" }); return "placed"; } });
pling.action({ id: "order.view", title: "View the order", risk: "read", run: () => "seen" });
</script></head><body><h1>Authority</h1></body></html>`

// followedAuthority is the address of the authority a test page follows,
// for pages served before it is known: the authority starts after the
// site, whose origin is its audience.
type followedAuthority struct {
	mu  sync.Mutex
	url string
}

func (a *followedAuthority) set(url string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.url = url
}

// page serves html (testPage) with {{AUTHORITY}} replaced at each request
// by the address set last.
func (a *followedAuthority) page(html string) http.HandlerFunc {
	return testPage(func() string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return strings.ReplaceAll(html, "{{AUTHORITY}}", a.url)
	})
}

// TestBrowserAuthority: a page in Chromium configured with authority: a
// delegated token minted by the real device grant works; the same write
// request id sent again from the reloaded page is REPLAY_DETECTED through
// the authority's record; after the operator rotates the signing key the
// page accepts tokens signed before and after; once the operator revokes
// the session, the
// still-open page refuses it with SESSION_REVOKED within 5 s.
func TestBrowserAuthority(t *testing.T) {
	d := dist(t)
	var executed atomic.Int64
	var followed followedAuthority
	extra := http.NewServeMux()
	extra.HandleFunc("/test/authority.html", followed.page(authorityPage))
	extra.HandleFunc("/test/authority/executed", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			executed.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	site := startBrowserSite(t, d, extra)

	const opKey = "operator-key-for-e2e"
	as := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{site.url: {"order.*"}}, OperatorKeys: []string{opKey}}, nil)
	followed.set(as.URL)

	call := func(method, path, bearer string, body any) (int, map[string]any) {
		t.Helper()
		return authoritytest.Call(t, as.URL, method, path, bearer, body)
	}
	// The device grant over HTTP: create, approve, collect.
	grant := as.DeviceGrant(t, authoritytest.Grant{Audience: site.url, Scope: []string{"order.*"}, Agent: "e2e-agent"})
	token, sessionID := grant.Token, grant.SID

	tb := site.open(t, "/test/authority.html")
	sendWith := func(token, reqID, capability string) (ok bool, code string, details map[string]any) {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"protocol": "pling.surface/0.1", "id": reqID, "method": "invoke",
			"capability": capability, "input": map[string]any{}, "session": token})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := tb.page.RoundTrip(ctx, req)
		if err != nil {
			t.Fatalf("invoke %s: %v", reqID, err)
		}
		var res schema.SurfaceResponse
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("invoke %s: %v in %s", reqID, err, out)
		}
		if res.Error == nil {
			return res.OK, "", nil
		}
		return res.OK, res.Error.Code, res.Error.Details
	}
	send := func(reqID, capability string) (bool, string, map[string]any) {
		t.Helper()
		return sendWith(token, reqID, capability)
	}

	if ok, code, _ := send("auth-view-1", "order.view"); !ok {
		t.Fatalf("delegated invoke: %s", code)
	}
	if ok, code, _ := send("auth-place-1", "order.place"); !ok {
		t.Fatalf("delegated write invoke: %s", code)
	}

	// Reload: the page's own guard starts empty, the authority's record
	// does not.
	eval[bool](tb, `(window.__before = true, setTimeout(() => location.reload(), 0), true)`)
	tb.reloaded()
	ok, rcode, details := send("auth-place-1", "order.place")
	if ok || rcode != "REPLAY_DETECTED" {
		t.Fatalf("resent from the reloaded page: ok=%v code=%q, want REPLAY_DETECTED", ok, rcode)
	}
	if prev, _ := details["previous"].(map[string]any); prev["completed"] != true || prev["ok"] != true {
		t.Errorf("previous %v, want completed and ok", details["previous"])
	}
	if n := executed.Load(); n != 1 {
		t.Errorf("order.place ran %d times, want once", n)
	}
	if code, b := call("POST", "/v1/sessions/"+sessionID+"/requests/auth-place-1", token, nil); code != 409 {
		t.Errorf("the authority's record of auth-place-1: %d %v, want 409", code, b)
	}

	// The operator rotates the signing key: the open page keeps accepting
	// the token signed before, and accepts one signed after (a kid it has
	// not seen, fetched when the token arrives).
	if code, b := call("POST", "/v1/keys/rotate", opKey, nil); code != 200 {
		t.Fatalf("rotate: %d %v", code, b)
	}
	rotated := as.DeviceGrant(t, authoritytest.Grant{Audience: site.url, Scope: []string{"order.*"}, Agent: "e2e-agent"}).Token
	if strings.Split(rotated, ".")[1] == strings.Split(token, ".")[1] {
		t.Fatal("the rotation did not change the signing kid")
	}
	if ok, code, _ := send("auth-view-rotated-old", "order.view"); !ok {
		t.Errorf("the token signed before the rotation: %s", code)
	}
	if ok, code, _ := sendWith(rotated, "auth-view-rotated-new", "order.view"); !ok {
		t.Errorf("the token signed after the rotation: %s", code)
	}

	// The operator revokes; the open page refuses the session within 5 s.
	if code, b := call("POST", "/v1/sessions/"+sessionID+"/revoke", opKey, nil); code != 200 {
		t.Fatalf("revoke: %d %v", code, b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		_, code, _ := send("auth-after-"+strconv.Itoa(i), "order.view")
		if code == "SESSION_REVOKED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page still answers %q 5 s after the revocation", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
