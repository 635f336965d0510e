package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/schema"
)

// invokeLimitPage follows the authority at {{AUTHORITY}} with an invoke
// limit of 4 that hardly refills.
const invokeLimitPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoke limit</title><link rel="icon" href="data:,">
<script src="/pling/pling.js" data-expose="*" data-authority="{{AUTHORITY}}"></script>
<script>
pling.configure({ anonymous: ["order.view"], rateLimit: { describe: { burst: 100, perSecond: 10 }, invoke: { burst: 4, perSecond: 0.001 } } });
pling.action({ id: "order.view", title: "View the order", risk: "read", run: () => "seen" });
</script></head><body><h1>Invoke limit</h1></body></html>`

// TestInvokeLimitAcrossTabs: in Chromium, two tabs of a page that follows
// the authority, sent invokes of one delegated session in turn, get no
// more than the session's burst between them (the limit is the
// session's, kept at the authority, not each page's); a third tab (a
// reload) gets none either; anonymous invokes keep each page's own
// bucket.
func TestInvokeLimitAcrossTabs(t *testing.T) {
	d := dist(t)
	var followed followedAuthority
	extra := http.NewServeMux()
	extra.HandleFunc("/test/invokelimit.html", followed.page(invokeLimitPage))
	site := startBrowserSite(t, d, extra)
	as := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{site.url: {"order.*"}}, OperatorKeys: []string{"operator-key-for-e2e"}}, nil)
	followed.set(as.URL)
	token := as.DeviceGrant(t, authoritytest.Grant{Audience: site.url, Scope: []string{"order.*"}, Agent: "e2e-agent"}).Token

	n := 0
	send := func(tb *tab, session string) string {
		t.Helper()
		n++
		req := map[string]any{"protocol": "pling.surface/0.1", "id": "lim-" + strconv.Itoa(n), "method": "invoke",
			"capability": "order.view", "input": map[string]any{}}
		if session != "" {
			req["session"] = session
		}
		b, _ := json.Marshal(req)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := tb.page.RoundTrip(ctx, b)
		if err != nil {
			t.Fatalf("invoke: %v", err)
		}
		var res schema.SurfaceResponse
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("invoke: %v in %s", err, out)
		}
		if res.Error != nil {
			return res.Error.Code
		}
		return "ok"
	}
	tab1, tab2 := site.open(t, "/test/invokelimit.html"), site.open(t, "/test/invokelimit.html")
	var got []string
	for range 4 {
		got = append(got, send(tab1, token), send(tab2, token))
	}
	got = append(got, send(site.open(t, "/test/invokelimit.html"), token))
	want := []string{"ok", "ok", "ok", "ok", "RATE_LIMITED", "RATE_LIMITED", "RATE_LIMITED", "RATE_LIMITED", "RATE_LIMITED"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the session's invokes from two tabs, then a third (-want +got)\n%s", diff)
	}
	got = nil
	for range 5 {
		got = append(got, send(tab1, ""))
	}
	got = append(got, send(tab2, ""))
	if diff := cmp.Diff([]string{"ok", "ok", "ok", "ok", "RATE_LIMITED", "ok"}, got); diff != "" {
		t.Errorf("anonymous invokes: tab 1 five times, then tab 2 (-want +got)\n%s", diff)
	}
}
