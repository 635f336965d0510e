package follow_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestRotateKey: the operator rotates the signing key (POST
// /v1/keys/rotate); a token signed before the rotation keeps verifying in
// a page that follows the authority until it expires, a token signed
// after it verifies too (the page fetches the new kid), and the retired
// key is unpublished once its last token expired.
func TestRotateKey(t *testing.T) {
	st, _ := authoritytest.SQLite(t)
	// The retired key stays published for maxTTL after the rotation; the
	// tokens here live shorter, so there is a time when the key is
	// published and the token has expired.
	const tokenTTL, maxTTL = 2 * time.Second, 5 * time.Second
	a := &authorityFixture{t: t, store: st}
	var err error
	a.srv, err = authority.NewServer(context.Background(), authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}},
		OperatorKeys: []string{opKey}, MaxWait: 3 * time.Second, MaxTokenTTL: maxTTL})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = l.Addr().String()
	a.hs = &http.Server{Handler: a.srv}
	go a.hs.Serve(l)
	t.Cleanup(a.stop)

	p := newPage(t, a, nil)
	kids := func() int {
		_, b := a.call("GET", "/v1/keys", "", nil)
		return len(b["keys"].([]any))
	}
	before := mintFor(a, tokenTTL)
	signedAt := time.Now()
	if ok, code, _ := p.invoke(t, "before-1", "order.view", before); !ok {
		t.Fatalf("before the rotation: %s", code)
	}

	if st, b := a.call("POST", "/v1/keys/rotate", "", nil); st != http.StatusUnauthorized {
		t.Errorf("rotate without the operator key: %d %v, want 401", st, b)
	}
	st2, b := a.call("POST", "/v1/keys/rotate", opKey, nil)
	rotatedAt := time.Now()
	if st2 != http.StatusOK || len(b["keys"].([]any)) != 2 {
		t.Fatalf("rotate: %d %v, want 200 with both keys", st2, b)
	}
	after := mintFor(a, tokenTTL)
	if kidOf(before) == kidOf(after) {
		t.Fatal("the rotation did not change the signing kid")
	}
	for name, tok := range map[string]string{"signed before": before, "signed after": after} {
		if ok, code, _ := p.invoke(t, "rotated-"+strings.ReplaceAll(name, " ", "-"), "order.view", tok); !ok {
			t.Errorf("token %s the rotation: %s", name, code)
		}
	}

	time.Sleep(time.Until(signedAt.Add(tokenTTL + 1100*time.Millisecond))) // exp is in whole seconds
	if ok, code, _ := p.invoke(t, "before-expired", "order.view", before); ok || code != "SESSION_EXPIRED" {
		t.Errorf("the token signed before the rotation, past its expiry: ok=%v %q, want SESSION_EXPIRED", ok, code)
	}
	time.Sleep(time.Until(rotatedAt.Add(maxTTL + 100*time.Millisecond)))
	if n := kids(); n != 1 {
		t.Errorf("%d keys published after the retired key's last token expired, want 1", n)
	}
}

func kidOf(token string) string {
	if parts := strings.Split(token, "."); len(parts) > 1 {
		return parts[1]
	}
	return ""
}

// mintFor is mint with a token lifetime of ttl, for its token only.
func mintFor(a *authorityFixture, ttl time.Duration) string {
	a.t.Helper()
	_, token := a.mintTTL(ttl)
	return token
}
