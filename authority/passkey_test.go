package authority_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pling-go/pling/authority"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestPasskeyStore: the passkeys' table and the approval a passkey
// decides, the same on both stores: a credential id is registered once,
// a subject's passkeys are listed oldest first, and an approval is
// approved with its assertion only while the credential's counter is the
// one the authority read (one transaction: a counter that moved approves
// nothing).
func TestPasskeyStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open().(authority.SQLStore)
		a1 := authority.Passkey{ID: []byte{1, 2, 3}, Subject: "alice", Credential: `{"id":"AQID"}`, SignCount: 0, MAC: []byte{}, CreatedMs: 10}
		a2 := authority.Passkey{ID: []byte{4, 5}, Subject: "alice", Credential: `{"id":"BAU"}`, SignCount: 7, MAC: []byte{9, 9}, CreatedMs: 20}
		for _, p := range []authority.Passkey{a2, a1, {ID: []byte{6}, Subject: "bob", Credential: "{}", MAC: []byte{}, CreatedMs: 5}} {
			if err := st.AddPasskey(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.AddPasskey(ctx, authority.Passkey{ID: []byte{1, 2, 3}, Subject: "mallory", Credential: "{}", MAC: []byte{}}); !errors.Is(err, authority.ErrConflict) {
			t.Errorf("a credential id registered twice: %v, want ErrConflict", err)
		}
		got, err := st.Passkeys(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]authority.Passkey{a1, a2}, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("alice's passkeys (-want +got):\n%s", diff)
		}
		if got, _ := st.Passkeys(ctx, "nobody"); len(got) != 0 {
			t.Errorf("nobody's passkeys: %v", got)
		}
		ap := authority.Approval{ID: "ap1", PollSecretDigest: []byte{1}, Audience: "https://shop.example", SessionID: "s1",
			Binding: digest('a'), Challenge: "{}", CreatedMs: 100, ExpiresMs: 10_000}
		if err := st.CreateApproval(ctx, ap, 10); err != nil {
			t.Fatal(err)
		}
		if err := st.ApproveWithPasskey(ctx, "ap1", "assertion", a2.ID, 6, 8, 200); !errors.Is(err, authority.ErrConflict) {
			t.Errorf("a counter that moved: %v, want ErrConflict", err)
		}
		if a, _ := st.Approval(ctx, "ap1"); a.Status != authority.StatusPending || a.Passkey != "" {
			t.Errorf("after a refused approve: %+v", a)
		}
		if err := st.ApproveWithPasskey(ctx, "ap1", "assertion", a2.ID, 7, 8, 200); err != nil {
			t.Fatal(err)
		}
		if a, _ := st.Approval(ctx, "ap1"); a.Status != authority.StatusApproved || a.Passkey != "assertion" {
			t.Errorf("after the approve: %+v", a)
		}
		if got, _ := st.Passkeys(ctx, "alice"); len(got) != 2 || got[1].SignCount != 8 || got[1].UsedMs != 200 {
			t.Errorf("the counter after the approve: %+v", got)
		}
		if err := st.ApproveWithPasskey(ctx, "ap1", "again", a2.ID, 8, 9, 300); !errors.Is(err, authority.ErrConflict) {
			t.Errorf("approved twice: %v, want ErrConflict", err)
		}
		if got, _ := st.Passkeys(ctx, "alice"); got[1].SignCount != 8 {
			t.Errorf("a refused second approve moved the counter to %d", got[1].SignCount)
		}
	})
}

// TestPasskeyApprovalNotByOperatorOrDatabase: for a capability its site
// requires a passkey for, the screen of a person without one offers no
// Approve, and neither the operator's route nor a row set to approved in
// the database gets an approval signed; a capability it does not name is
// approved as before.
func TestPasskeyApprovalNotByOperatorOrDatabase(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		st := open()
		f := newFixture(t, st, func(c *authority.Config) {
			c.MaxBodyBytes = 4096
			c.Passkeys = authority.PasskeyConfig{Origin: "https://auth.example", Approvals: map[string][]string{origin: {"refund@*"}}}
		})
		sid, tok := f.session()
		create := func(capability string) (string, string) {
			t.Helper()
			rq := approvalRequest("ord_1", f.clock.Load()+300_000)
			rq.Capability = capability
			s, body := f.call("POST", "/v1/approvals", tok, approvalBody(sid, rq))
			if s != 201 {
				t.Fatalf("create: %d %v", s, body)
			}
			return body["id"].(string), body["pollSecret"].(string)
		}
		id, secret := create("refund@order")
		// The person has no passkey: the screen offers Deny only.
		if code, page := fetch(t, browser(t), "GET", f.url+authority.ApprovalPath+"?id="+id, nil, nil); code != http.StatusOK ||
			!strings.Contains(page, `id="no-passkey"`) || strings.Contains(page, `id="approve"`) {
			t.Errorf("the screen for a person without a passkey: %d\n%s", code, page)
		}
		if s, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); s == http.StatusOK || code(b) != string(perr.DelegationCredentialInvalid) {
			t.Errorf("the operator approved a passkey approval: %d %v", s, b)
		}
		// A writer of the database sets the row approved.
		if err := st.(authority.ApprovalStore).DecideApproval(context.Background(), id, authority.StatusApproved, f.clock.Load()); err != nil {
			t.Fatal(err)
		}
		s, b := f.call("POST", "/v1/approvals/"+id+"/token", "", map[string]any{"pollSecret": secret})
		if s == http.StatusOK || b["approval"] != nil {
			t.Errorf("an approval without the person's passkey was signed: %d %v", s, b)
		}
		id, secret = create("view@order")
		if s, b := f.call("POST", "/v1/approvals/"+id+"/approve", opKey, nil); s != http.StatusOK {
			t.Fatalf("the operator's approve of a capability without a passkey: %d %v", s, b)
		}
		if s, b := f.call("POST", "/v1/approvals/"+id+"/token", "", map[string]any{"pollSecret": secret}); s != http.StatusOK ||
			!strings.HasPrefix(b["approval"].(string), "pa1.") {
			t.Errorf("collect: %d %v", s, b)
		}
	})
}

// TestPasskeyAddNeedsOneYouHave: whoever holds the person's signed-in
// browser cannot add its own authenticator once the person has a
// passkey: the screen asks for an assertion of one they have, and a
// registration without it is refused before the new credential is read.
// With none registered yet, the first is registered without one.
func TestPasskeyAddNeedsOneYouHave(t *testing.T) {
	ctx := context.Background()
	st, err := authority.OpenSQLite(ctx, t.TempDir()+"/a.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	as := authoritytest.Start(t, authority.Config{Store: st, Audiences: map[string][]string{"http://shop.example": {"*"}},
		ScreenSubject: func(*http.Request) (string, bool) { return "alice", true },
		Passkeys:      authority.PasskeyConfig{Origin: "http://localhost"}}, nil)
	field := regexp.MustCompile(`name="(csrf|issued)" value="([^"]*)"`)
	post := func() (int, string, string) {
		t.Helper()
		c := browser(t)
		_, page := fetch(t, c, "GET", as.URL+authority.PasskeysPath, nil, nil)
		form := url.Values{"credential": {"{}"}}
		for _, m := range field.FindAllStringSubmatch(page, -1) {
			form.Set(m[1], m[2])
		}
		code, body := fetch(t, c, "POST", as.URL+authority.PasskeysPath, form, nil)
		return code, body, page
	}
	if code, body, _ := post(); code != http.StatusBadRequest || !strings.Contains(body, "sent no passkey") {
		t.Errorf("the first registration with no credential: %d, want 400 for the credential:\n%s", code, body)
	}
	cred := `{"id":"AQID","publicKey":"AQID","flags":{}}`
	if err := st.AddPasskey(ctx, authority.Passkey{ID: []byte{1, 2, 3}, Subject: "alice", Credential: cred, MAC: []byte{}, CreatedMs: 1}); err != nil {
		t.Fatal(err)
	}
	code, body, page := post()
	if !strings.Contains(page, "data-passkey-get=") {
		t.Errorf("the screen of a person with a passkey asks for none:\n%s", page)
	}
	if code != http.StatusForbidden || !strings.Contains(body, "needs one you have") {
		t.Errorf("a second registration without an assertion: %d, want 403:\n%s", code, body)
	}
	if got, _ := st.Passkeys(ctx, "alice"); len(got) != 1 {
		t.Errorf("alice has %d passkeys, want 1", len(got))
	}
}
