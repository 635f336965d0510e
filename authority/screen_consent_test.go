package authority_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

const consentOpKey = "operator-key-for-consent-tests"

// consentFixture is a real authority on loopback, whose own screens the
// tests open (site) and whose API they call (api): the same address.
type consentFixture struct {
	t         *testing.T
	site, api string
}

func newConsentFixture(t *testing.T) *consentFixture {
	t.Helper()
	as := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{"http://shop.example": {"*"}}, OperatorKeys: []string{consentOpKey}}, nil)
	return &consentFixture{t: t, site: as.URL, api: as.URL}
}

// ask creates a delegation as an agent would; it returns id and code.
func (f *consentFixture) ask(agentName string, scope ...string) (string, string) {
	f.t.Helper()
	b, _ := json.Marshal(map[string]any{"audience": "http://shop.example", "scope": scope, "ttlSeconds": 60, "agent": agentName})
	res, err := http.Post(f.api+"/v1/delegations", "application/json", bytes.NewReader(b))
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID, UserCode string }
	_ = json.NewDecoder(res.Body).Decode(&out)
	return out.ID, out.UserCode
}

// operatorGet decodes into out what the authority answers the operator
// to GET path.
func (f *consentFixture) operatorGet(path string, out any) {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.api+path, nil)
	req.Header.Set("Authorization", "Bearer "+consentOpKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	_ = json.NewDecoder(res.Body).Decode(out)
}

// state is what the authority says of the delegation now.
func (f *consentFixture) state(id string) (string, []string) {
	f.t.Helper()
	var out struct {
		Status string
		Scope  []string
	}
	f.operatorGet("/v1/delegations/"+id, &out)
	return out.Status, out.Scope
}

// openForm has a browser open the screen at u and returns it and the
// form's CSRF token, failing t unless the form is for id. another: the
// browser returned is a second one, which opened the screen too (its own
// cookie) and is to post the first one's token.
func openForm(t *testing.T, u, id string, another bool) (*http.Client, string) {
	t.Helper()
	c := browser(t)
	_, page := fetch(t, c, "GET", u, nil, nil)
	fid, csrf := hidden(page)
	if fid != id || csrf == "" {
		t.Fatalf("form id %q csrf %q, want id %q:\n%s", fid, csrf, id, page)
	}
	if another {
		c = browser(t)
		fetch(t, c, "GET", u, nil, nil)
	}
	return c, csrf
}

// browser is a client with cookies that follows no redirect.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return httpcheck.Do(t, c, req)
}

var hiddenRE = regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`)

func hidden(page string) (id, csrf string) {
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		if m[1] == "id" {
			id = m[2]
		} else {
			csrf = m[2]
		}
	}
	return
}

// The screen shows the agent's name and scope escaped: the agent is
// untrusted and its name is text, never markup.
func TestConsentShowsEscaped(t *testing.T) {
	f := newConsentFixture(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'`
	_, code := f.ask(evil, "cart.*", "checkout")
	st, page := fetch(t, browser(t), "GET", f.site+authority.ConsentPath+"?code="+strings.ToLower(strings.ReplaceAll(code, "-", "")), nil, nil)
	if st != 200 {
		t.Fatalf("HTTP %d\n%s", st, page)
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<img") {
		t.Errorf("agent markup reached the page:\n%s", page)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;", `value="cart.*"`, `value="checkout"`,
		"every capability whose name starts with “cart.”", "the capability “checkout” only", "http://shop.example", `<code id="user-code">` + code + `</code>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

func TestConsentDecisions(t *testing.T) {
	type outcome struct {
		HTTP   int
		Status string
		Scope  []string
	}
	tests := []struct {
		name   string
		form   func(id, csrf string) url.Values
		header map[string]string
		noJar  bool // a client that did not load the form (no cookie)
		want   outcome
	}{
		{name: "approve narrowed", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{200, "approved", []string{"cart.*"}}},
		{name: "approve cannot add a pattern", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*", "admin.*"}}
		}, want: outcome{200, "approved", []string{"cart.*"}}},
		{name: "approve with nothing ticked", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"admin.*"}}
		}, want: outcome{400, "pending", []string{"cart.*", "checkout"}}},
		{name: "deny", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"deny"}}
		}, want: outcome{200, "denied", []string{"cart.*", "checkout"}}},
		{name: "no CSRF token", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{403, "pending", []string{"cart.*", "checkout"}}},
		{name: "another browser's token", noJar: true, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{403, "pending", []string{"cart.*", "checkout"}}},
		{name: "cross-site POST", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{403, "pending", []string{"cart.*", "checkout"}}},
		{name: "cross-origin Origin", header: map[string]string{"Origin": "http://evil.example"}, form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{403, "pending", []string{"cart.*", "checkout"}}},
		{name: "a path in the id", form: func(id, csrf string) url.Values {
			return url.Values{"id": {"../../v1/keys"}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}
		}, want: outcome{403, "pending", []string{"cart.*", "checkout"}}},
		{name: "neither approve nor deny", form: func(id, csrf string) url.Values {
			return url.Values{"id": {id}, "csrf": {csrf}, "decision": {"maybe"}}
		}, want: outcome{400, "pending", []string{"cart.*", "checkout"}}},
	}
	f := newConsentFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, code := f.ask("agent", "cart.*", "checkout")
			c, csrf := openForm(t, f.site+authority.ConsentPath+"?code="+code, id, tt.noJar)
			st, body := fetch(t, c, "POST", f.site+authority.ConsentPath, tt.form(id, csrf), tt.header)
			status, scope := f.state(id)
			if diff := cmp.Diff(tt.want, outcome{st, status, scope}); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, body)
			}
		})
	}
}

func TestConsentLookups(t *testing.T) {
	f := newConsentFixture(t)
	_, code := f.ask("agent", "cart.*")
	tests := []struct {
		name, query string
		wantHTTP    int
		want        string
	}{
		{"no code: a form to type it", "", 200, `name="code"`},
		{"a malformed code", "?code=%3Cb%3E", 400, "eight letters"},
		{"an unknown code", "?code=BBBB-BBBB", 404, "No request has the code BBBB-BBBB"},
		{"a known code", "?code=" + code, 200, `id="approve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, page := fetch(t, browser(t), "GET", f.site+authority.ConsentPath+tt.query, nil, nil)
			if st != tt.wantHTTP || !strings.Contains(page, tt.want) {
				t.Errorf("HTTP %d, want %d with %q:\n%s", st, tt.wantHTTP, tt.want, page)
			}
		})
	}
}

// TestConsentApprovesAsThePerson: the consent screen
// names the person who approves (here, with no login, the browser's
// pseudonym) on approve, so two people's agents both called "Claude" get
// tokens with different subjects, neither of them "Claude". A screen
// that sent no subject would be refused (400); were the agent's name the
// subject, both tokens would say "Claude".
func TestConsentApprovesAsThePerson(t *testing.T) {
	f := newConsentFixture(t)
	subjects := map[string]bool{}
	for range 2 {
		b, _ := json.Marshal(map[string]any{"audience": "http://shop.example", "scope": []string{"cart.*"}, "ttlSeconds": 60, "agent": "Claude"})
		res, err := http.Post(f.api+"/v1/delegations", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ ID, UserCode, PollSecret string }
		_ = json.NewDecoder(res.Body).Decode(&d)
		res.Body.Close()
		c := browser(t)
		st, page := fetch(t, c, "GET", f.site+authority.ConsentPath+"?code="+d.UserCode, nil, nil)
		if st != 200 {
			t.Fatalf("consent page: %d", st)
		}
		id, csrf := hidden(page)
		if st, page = fetch(t, c, "POST", f.site+authority.ConsentPath, url.Values{"id": {id}, "csrf": {csrf}, "decision": {"approve"}, "scope": {"cart.*"}}, nil); st != 200 {
			t.Fatalf("approve: %d\n%s", st, page)
		}
		tb, _ := json.Marshal(map[string]string{"pollSecret": d.PollSecret})
		res, err = http.Post(f.api+"/v1/delegations/"+d.ID+"/token", "application/json", bytes.NewReader(tb))
		if err != nil {
			t.Fatal(err)
		}
		var tok struct{ Token string }
		_ = json.NewDecoder(res.Body).Decode(&tok)
		res.Body.Close()
		parts := strings.Split(tok.Token, ".")
		if len(parts) != 4 {
			t.Fatalf("no token: %q", tok.Token)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[2])
		var claims struct{ Sub string }
		_ = json.Unmarshal(raw, &claims)
		if !strings.HasPrefix(claims.Sub, "browser:") {
			t.Errorf("sub = %q, want the approving browser's pseudonym", claims.Sub)
		}
		subjects[claims.Sub] = true
	}
	if len(subjects) != 2 {
		t.Errorf("two people got subjects %v, want two different ones", subjects)
	}
}
