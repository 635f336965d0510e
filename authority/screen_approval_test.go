package authority_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// challenge posts an approval request as a delegated session's page
// would; it returns the approval's id.
func (f *consentFixture) challenge(summary, inputValue string) string {
	f.t.Helper()
	sess := authoritytest.DeviceGrant(f.t, f.api, consentOpKey, authoritytest.Grant{Audience: "http://shop.example", Scope: []string{"*"}})
	exp := time.Now().UnixMilli() + 60_000
	b, _ := json.Marshal(map[string]any{"sessionId": sess.SID, "audience": "http://shop.example",
		"request": map[string]any{"capability": "order.refund", "input": map[string]any{"to": inputValue, "record": "ord_7"},
			"session": "sha256:" + strings.Repeat("c", 64), "requestId": "r1", "expiresAtMs": exp, "summary": summary},
		"challenge": map[string]any{"binding": "sha256:" + strings.Repeat("c", 64), "capability": "order.refund", "title": "Refund <b>order</b>", "risk": "destructive",
			"summary": summary, "agent": "Claude", "expiresAtMs": exp,
			"input": []map[string]any{{"name": "to", "title": "Pay to", "value": inputValue}}}})
	req, _ := http.NewRequest("POST", f.api+"/v1/approvals", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+sess.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 201 || out.ID == "" {
		f.t.Fatalf("create: HTTP %d", res.StatusCode)
	}
	return out.ID
}

// approvalStatus is what the authority says of the approval now.
func (f *consentFixture) approvalStatus(id string) string {
	f.t.Helper()
	var out struct{ Status string }
	f.operatorGet("/v1/approvals/"+id, &out)
	return out.Status
}

// TestApprovalScreenShowsEscaped: the approval screen names whose session
// asks (the subject and agent of the delegation the person consented to),
// and shows the request — capability, summary, input — as text, never
// markup, with no script, a CSP that forbids framing and script, and no
// operator key in the page.
func TestApprovalScreenShowsEscaped(t *testing.T) {
	f := newConsentFixture(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'`
	id := f.challenge("Refund €12 "+evil, "IBAN "+evil)
	res, err := http.Get(f.site + authority.ApprovalPath + "?id=" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	page := buf.String()
	if res.StatusCode != 200 {
		t.Fatalf("HTTP %d\n%s", res.StatusCode, page)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") || strings.Contains(page, "<b>") || strings.Contains(page, consentOpKey) {
		t.Errorf("page markup or the operator key reached the screen:\n%s", page)
	}
	for _, want := range []string{"order.refund", "Refund &lt;b&gt;order&lt;/b&gt;", "Refund €12 &lt;script&gt;alert(1)&lt;/script&gt;",
		"IBAN &lt;script&gt;", "Pay to", "http://shop.example", `id="approve"`, `id="deny"`,
		// Whose session asks: the subject the person consented as and
		// the agent's name then, from the authority's own records.
		`<strong id="subject">` + authoritytest.Subject + `</strong>`, `id="session-agent">test-agent<`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options %q", got)
	}
}

// TestApprovalScreenDecisions: a person's approve or deny reaches the
// authority once; a form without this browser's CSRF token, from another
// site, or naming a path is refused and the approval stays pending.
func TestApprovalScreenDecisions(t *testing.T) {
	type outcome struct {
		HTTP   int
		Status string
	}
	tests := []struct {
		name   string
		form   func(id, csrf string) url.Values
		header map[string]string
		noJar  bool
		want   outcome
	}{
		{name: "approve", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}}
		}, want: outcome{200, "approved"}},
		{name: "deny", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"deny"}}
		}, want: outcome{200, "denied"}},
		{name: "no CSRF token", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "the consent screen's token", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {"x" + csrf}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "another browser's token", noJar: true, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "cross-site POST", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "cross-origin Origin", header: map[string]string{"Origin": "http://evil.example"}, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "a path in the id", form: func(id, csrf string) url.Values {
			return url.Values{"id": {"../../v1/keys"}, "csrf": {csrf}, "decision": {"approve"}}
		}, want: outcome{403, "pending"}},
		{name: "neither approve nor deny", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"maybe"}}
		}, want: outcome{400, "pending"}},
	}
	f := newConsentFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := f.challenge("Refund €12", "shop")
			c, csrf := openForm(t, f.site+authority.ApprovalPath+"?id="+id, id, tt.noJar)
			st, body := fetch(t, c, "POST", f.site+authority.ApprovalPath, tt.form(id, csrf), tt.header)
			if diff := cmp.Diff(tt.want, outcome{st, f.approvalStatus(id)}); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, body)
			}
		})
	}
	t.Run("decided once", func(t *testing.T) {
		id := f.challenge("Refund €12", "shop")
		c, csrf := openForm(t, f.site+authority.ApprovalPath+"?id="+id, id, false)
		fetch(t, c, "POST", f.site+authority.ApprovalPath, url.Values{"id": {id}, "csrf": {csrf}, "decision": {"deny"}}, nil)
		st, _ := fetch(t, c, "POST", f.site+authority.ApprovalPath, url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}}, nil)
		if st != 409 || f.approvalStatus(id) != "denied" {
			t.Errorf("HTTP %d, status %s; want 409 and denied", st, f.approvalStatus(id))
		}
	})
}
