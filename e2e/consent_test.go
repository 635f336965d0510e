package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// The delegation flow end to end, as docs/authority.md tells it: an agent
// (the Go client) asks a real authority for a session on the demo site;
// a person opens the verification URI in Chromium, sees the agent's name —
// markup in it shown as text —, unticks one pattern and approves; the
// agent's Wait returns a token with the narrowed scope; pling invoke
// --token-file uses it on the demo page, which follows the authority
// (data-authority, added by pling serve's site server). Then the agent
// invokes with the token in a shop page open in Chromium (agent.Client
// over CDP); the operator revokes the session, and the next invoke in the
// still-open page is SESSION_REVOKED within 5 s.
func TestConsentScreen(t *testing.T) {
	site, ctx := startAuthoritySite(t)
	origin := site.origin

	// Build pling meanwhile (the agent's command line).
	plingBin := filepath.Join(t.TempDir(), "pling")
	if goruntime.GOOS == "windows" {
		plingBin += ".exe"
	}
	built := make(chan error, 1)
	go func() {
		out, err := exec.CommandContext(ctx, goTool(t), "build", "-o", plingBin, "github.com/pling-go/pling/cmd/pling").CombinedOutput()
		if err != nil {
			err = &exec.ExitError{Stderr: out}
		}
		built <- err
	}()

	const evilName = `<img src=x onerror="document.title='pwned'">Evil <b>agent</b> & "co"`
	p, err := agent.RequestDelegation(ctx, site.auth.URL, agent.DelegationRequest{Audience: origin,
		Scope: []string{"cart.*", "checkout"}, TTL: 10 * time.Minute, Agent: evilName})
	if err != nil {
		t.Fatal(err)
	}
	type waited struct {
		d   *agent.Delegated
		err error
	}
	got := make(chan waited, 1)
	go func() { d, err := p.Wait(ctx); got <- waited{d, err} }()

	// The person.
	bctx, devTools := launchBrowser(t, ctx) // the agent's pages are tabs of the same browser
	link, _ := url.Parse(p.VerificationURI)
	link.RawQuery = url.Values{"code": {p.UserCode}}.Encode()
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		personTab{bctx}.do(t, what, actions...)
	}
	value := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		sctx, scancel := context.WithTimeout(bctx, waitLimit)
		defer scancel()
		v, err := chromedp.Run(sctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	step("opening "+link.String(), chromedp.Navigate(link.String()), chromedp.WaitVisible(chromedp.CSS("#approve")))
	shown := value("the agent's name", chromedp.TextContent(chromedp.CSS("#agent")))
	markup := value("markup", chromedp.Evaluate[string](`String(document.querySelectorAll("#agent *, img, script").length)`))
	title := value("title", chromedp.Title())
	if shown != evilName || markup != "0" || title == "pwned" {
		t.Errorf("agent name shown %q (want it verbatim, as text), %s elements, title %q", shown, markup, title)
	}
	step("approving", chromedp.Click(chromedp.CSS(`input[name="scope"][value="checkout"]`)),
		chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#done")))
	if done := value("the answer", chromedp.TextContent(chromedp.CSS("#done"))); !strings.HasPrefix(done, "Approved") {
		t.Errorf("after approve the page says %q", done)
	}

	var w waited
	select {
	case w = <-got:
	case <-ctx.Done():
		t.Fatal("Wait did not return")
	}
	if w.err != nil {
		t.Fatalf("Wait: %v", w.err)
	}
	if diff := cmp.Diff([]string{"cart.*"}, w.d.Scope); diff != "" {
		t.Errorf("token scope (-want +got):\n%s", diff)
	}

	// The agent's command line with the token in a private file.
	tokenFile := filepath.Join(t.TempDir(), "shop.token")
	if err := os.WriteFile(tokenFile, []byte(w.d.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-built; err != nil {
		t.Fatalf("go build pling: %s", err.(*exec.ExitError).Stderr)
	}
	invoke := func(args ...string) (int, string) {
		cmd := exec.CommandContext(ctx, plingBin, append([]string{"invoke", origin + "/shop/"}, args...)...)
		cmd.Env = append(os.Environ(), "PLING_TOKEN_DIR="+t.TempDir(), "PLING_SESSION=")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	tests := []struct {
		name     string
		args     []string
		wantExit int
		want     string
	}{
		{"the token's scope", []string{"cart.add", "--input", `{"sku":"pack-20"}`, "--token-file", tokenFile}, 0, "ok: cart.add"},
		{"unticked by the person", []string{"checkout", "--token-file", tokenFile}, 1, "CAPABILITY_NOT_EXPOSED"},
		{"no token: the page verifies sessions now", []string{"cart.add", "--input", `{"sku":"pack-20"}`}, 1, "CAPABILITY_NOT_EXPOSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := invoke(tt.args...)
			if code != tt.wantExit || !strings.Contains(out, tt.want) || strings.Contains(out, w.d.Token) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tt.wantExit, tt.want, out)
			}
		})
	}

	// The agent's own page: a shop tab driven by the Go client with the
	// token, left open across the revocation.
	page := openTab(t, ctx, devTools, origin+"/shop/", 20*time.Second)
	client := agent.New(page, agent.WithSession(w.d.Token), agent.WithIDPrefix("e2e-consent"))
	add := func() (*agent.Result, error) {
		ictx, icancel := context.WithTimeout(ctx, 30*time.Second)
		defer icancel()
		return client.Invoke(ictx, "cart.add", map[string]any{"sku": "socks-wool"})
	}
	if _, err := add(); err != nil {
		t.Fatalf("the delegated invoke in the open page: %v", err)
	}
	if code, b := authoritytest.Call(t, site.auth.URL, http.MethodPost, "/v1/sessions/"+w.d.SessionID+"/revoke", site.auth.OperatorKey, nil); code != http.StatusOK {
		t.Fatalf("revoke: HTTP %d %v", code, b)
	}
	revoked := time.Now()
	for n := 1; ; n++ {
		_, err := add()
		var pe *agent.ProtocolError
		if errors.As(err, &pe) && pe.Code == perr.SessionRevoked {
			t.Logf("the open page refused the revoked session %v after the revocation (invoke %d)", time.Since(revoked).Round(time.Millisecond), n)
			break
		}
		if time.Since(revoked) > 5*time.Second {
			t.Fatalf("the open page still answers %v 5 s after the revocation", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
