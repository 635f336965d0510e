package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

const (
	siteOrigin = "http://127.0.0.1:8080"
	operator   = "operator-key-for-tests"
)

// authorityFixture is a real pling authority on SQLite, on loopback.
type authorityFixture struct{ url string }

func newAuthority(t *testing.T) *authorityFixture {
	t.Helper()
	a := authoritytest.Start(t, authority.Config{OperatorKeys: []string{operator},
		Audiences: map[string][]string{siteOrigin: {"*"}, "https://other.example": {"*"}}}, nil)
	return &authorityFixture{url: a.URL}
}

func (a *authorityFixture) call(t *testing.T, path, auth string, body any) map[string]any {
	t.Helper()
	_, out := authoritytest.Call(t, a.url, http.MethodPost, path, auth, body)
	return out
}

// session walks the device grant: ask, consent, collect.
func (a *authorityFixture) session(t *testing.T, audience string, scope ...string) (sid, tok string) {
	t.Helper()
	s := authoritytest.DeviceGrant(t, a.url, operator, authoritytest.Grant{Audience: audience, Scope: scope, Agent: "assistant"})
	return s.SID, s.Token
}

func (a *authorityFixture) token(t *testing.T, scope ...string) string {
	_, tok := a.session(t, siteOrigin, scope...)
	return tok
}

func (a *authorityFixture) tokenAuth(t *testing.T) *gateway.TokenAuth {
	t.Helper()
	return startTokenAuth(t, a.url)
}

// startTokenAuth starts token checks against the authority at url for
// siteOrigin; they stop with the test.
func startTokenAuth(t *testing.T, url string) *gateway.TokenAuth {
	t.Helper()
	ta, err := gateway.NewTokenAuth(url, []string{siteOrigin}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ta.Close)
	return ta
}

func TestDelegationTokens(t *testing.T) {
	a := newAuthority(t)
	e := start(t, answer("hi"), func(c *gateway.Config) { c.Tokens = a.tokenAuth(t) })
	_, otherOrigin := a.session(t, "https://other.example", "gateway:*")
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"scope gateway:*", a.token(t, "gateway:*"), true},
		{"scope *", a.token(t, "*"), true},
		{"scope of page actions only", a.token(t, "orders.*", "cart.view"), false},
		{"another origin", otherOrigin, false},
		{"tampered", a.token(t, "gateway:*") + "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.client(tt.token).Chat.Completions.New(context.Background(), say("hi"))
			if tt.ok && err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !tt.ok {
				if diff := cmp.Diff(apiError{401, "UNAUTHORIZED", "authentication_error", ""}, asAPIError(t, err)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
	t.Run("revoked within 5s", func(t *testing.T) {
		sid, tok := a.session(t, siteOrigin, "gateway:*")
		c := e.client(tok)
		if _, err := c.Chat.Completions.New(context.Background(), say("hi")); err != nil {
			t.Fatal(err)
		}
		a.call(t, "/v1/sessions/"+sid+"/revoke", operator, nil)
		waitFor(t, "the revoked token to be refused", func() bool {
			_, err := c.Chat.Completions.New(context.Background(), say("hi"))
			return err != nil && asAPIError(t, err).Code == "UNAUTHORIZED"
		})
	})
}

// TestAuthorityDownAtStart: a gateway whose authority does not answer at
// start is not ready and refuses tokens; once the authority answers, the
// keys are fetched within the 5 s retry and the token is accepted.
func TestAuthorityDownAtStart(t *testing.T) {
	a := newAuthority(t)
	tok := a.token(t, "gateway:*")
	var up atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		target, _ := url.Parse(a.url)
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	ta, err := gateway.NewTokenAuth(front.URL, []string{siteOrigin}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.Start(context.Background()); err == nil {
		t.Fatal("Start reported no error with the authority down")
	}
	t.Cleanup(ta.Close)
	e := start(t, answer("hi"), func(c *gateway.Config) { c.Tokens = ta })
	res, err := http.Get(e.gw.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 {
		t.Errorf("readyz %d with no keys, want 503", res.StatusCode)
	}
	_, err = e.client(tok).Chat.Completions.New(context.Background(), say("hi"))
	if got := asAPIError(t, err).Code; got != "UNAUTHORIZED" {
		t.Errorf("token with no keys: %s", got)
	}
	up.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for !ta.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("keys not fetched 10 s after the authority came up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := e.client(tok).Chat.Completions.New(context.Background(), say("hi")); err != nil {
		t.Errorf("token once the keys are in: %v", err)
	}
}
