package demosite

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The consent screen: the site's backend side of a delegation
// (docs/authority.md). The agent asked the authority for a session and
// sent its person here with a user code; this page shows what was asked —
// by whom (the agent's own, untrusted, name), for which origin, which
// capability patterns — lets the person narrow the scope and approve or
// deny, and calls the authority's operator API with the operator key,
// which never reaches the browser.

// ConsentPath is where the consent screen is served; the authority's
// verification URI should be this path on the site.
const ConsentPath = "/pling/consent"

// Consent configures the consent screen.
type Consent struct {
	// AuthorityURL is the authority's base URL.
	AuthorityURL string
	// OperatorKey authenticates the site to the authority's operator API.
	OperatorKey string
	// Client talks to the authority (default: 10 s timeout).
	Client *http.Client
	// Subject names the signed-in person who approves (the token's
	// subject, the owner of the agent's continuity tasks; spec §9.1); ok
	// false refuses the approval (not signed in). nil (the demo, which
	// has no login) names the browser: "browser:" and a digest of its
	// consent cookie, a stable pseudonym per browser, so two browsers are
	// two people and never the agent's self-chosen name.
	Subject func(r *http.Request) (subject string, ok bool)
	// Logger gets one line per decision (delegation id and outcome, never
	// a key or a token).
	Logger *slog.Logger
}

type consent struct {
	Consent
	secret []byte // signs the CSRF tokens
	cop    *http.CrossOriginProtection
}

func newConsent(c Consent) (*consent, error) {
	if c.AuthorityURL == "" || c.OperatorKey == "" {
		return nil, errors.New("consent screen: an authority URL and an operator key are required")
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	c.AuthorityURL = strings.TrimRight(c.AuthorityURL, "/")
	return &consent{Consent: c, secret: secret, cop: http.NewCrossOriginProtection()}, nil
}

// consentCookie pairs the CSRF token with the browser that loaded the
// form (double submit): a forged form from another site has neither.
const consentCookie = "pling_consent"

// maxConsentForm bounds a POSTed form (64 patterns of 256 bytes at most).
const maxConsentForm = 32 << 10

// delegation is what the operator API says of a delegation.
type delegation struct {
	ID        string   `json:"id"`
	Audience  string   `json:"audience"`
	Scope     []string `json:"scope"`
	Agent     string   `json:"agent"`
	Status    string   `json:"status"`
	ExpiresAt string   `json:"expiresAt"`
}

type apiError struct {
	Status int
	Code   string
}

func (e *apiError) Error() string { return fmt.Sprintf("authority: %s (HTTP %d)", e.Code, e.Status) }

// call sends one operator request; out receives a 200 answer.
func (c *consent) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.AuthorityURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.OperatorKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Client.Do(req)
	if err != nil {
		return errors.New("the authority cannot be reached")
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return &apiError{Status: res.StatusCode, Code: e.Error.Code}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// normalizeCode accepts what a person types: any case, with or without
// the dash or spaces; the authority's codes are 8 letters, XXXX-XXXX.
func normalizeCode(s string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r == '-' || r == ' ':
		default:
			return "", false
		}
	}
	c := b.String()
	if len(c) != 8 {
		return "", false
	}
	return c[:4] + "-" + c[4:], true
}

// validID is the authority's delegation id alphabet (base64url).
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (c *consent) csrf(browser, id string) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(browser + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (c *consent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveScreen(w, r, c.show, c.decide)
}

// subject is the person approving: Consent.Subject, or the browser's
// pseudonym (see Consent.Subject).
func (c *consent) subject(r *http.Request, browser string) (string, bool) {
	if c.Subject != nil {
		return c.Subject(r)
	}
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte("subject\x00" + browser))
	return "browser:" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16]), true
}

// screenHeaders are the consent and approval screens' headers: never
// cached, no referrer (the user code and the approval id are in the URL),
// no script, never framed.
func screenHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
}

// browserID is the value of the screen's cookie name (scoped to path),
// a random pseudonym of the browser, set when absent.
func browserID(w http.ResponseWriter, r *http.Request, name, path string) string {
	if ck, err := r.Cookie(name); err == nil && len(ck.Value) >= 22 && len(ck.Value) <= 64 {
		return ck.Value
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: name, Value: v, Path: path, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return v
}

func (c *consent) show(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("code")
	if raw == "" {
		c.render(w, http.StatusOK, page{})
		return
	}
	code, ok := normalizeCode(raw)
	if !ok {
		c.render(w, http.StatusBadRequest, page{Problem: "That is not a code of this site: a code is eight letters, like BCDF-GHJK."})
		return
	}
	var d delegation
	err := c.call(r.Context(), http.MethodGet, "/v1/delegations?userCode="+url.QueryEscape(code), nil, &d)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Code == "DELEGATION_NOT_FOUND":
		c.render(w, http.StatusNotFound, page{Problem: "No request has the code " + code + ". Check the code the agent showed you."})
		return
	case err != nil:
		c.Logger.Error("consent: lookup", "err", err.Error())
		c.render(w, http.StatusBadGateway, page{Problem: "The authority could not be asked; try again in a moment."})
		return
	}
	if d.Status != "pending" {
		c.render(w, http.StatusOK, page{Done: statusText(d.Status), Request: view(d, "")})
		return
	}
	c.render(w, http.StatusOK, page{Request: view(d, c.csrf(browserID(w, r, consentCookie, ConsentPath), d.ID)), Code: code})
}

func (c *consent) decide(w http.ResponseWriter, r *http.Request) {
	if err := c.cop.Check(r); err != nil {
		c.render(w, http.StatusForbidden, page{Problem: "This form may only be sent from this site's own page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxConsentForm)
	if err := r.ParseForm(); err != nil {
		c.render(w, http.StatusBadRequest, page{Problem: "The form could not be read."})
		return
	}
	id, decision := r.PostForm.Get("id"), r.PostForm.Get("decision")
	ck, err := r.Cookie(consentCookie)
	if !validID(id) || err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.csrf(ck.Value, id))) {
		c.render(w, http.StatusForbidden, page{Problem: "This form is not one this page gave you: open the link again."})
		return
	}
	var d delegation
	if err := c.call(r.Context(), http.MethodGet, "/v1/delegations/"+id, nil, &d); err != nil {
		c.Logger.Error("consent: lookup", "err", err.Error())
		c.render(w, http.StatusBadGateway, page{Problem: "The authority could not be asked; try again in a moment."})
		return
	}
	var body any
	switch decision {
	case "approve":
		var scope []string
		for _, p := range r.PostForm["scope"] {
			// Only patterns that were asked for: the checkboxes narrow,
			// they cannot add.
			if slices.Contains(d.Scope, p) && !slices.Contains(scope, p) {
				scope = append(scope, p)
			}
		}
		if len(scope) == 0 {
			c.render(w, http.StatusBadRequest, page{Problem: "Tick at least one permission to approve, or deny the request.", Request: view(d, c.csrf(ck.Value, d.ID))})
			return
		}
		subject, ok := c.subject(r, ck.Value)
		if !ok {
			c.render(w, http.StatusForbidden, page{Problem: "Sign in to approve."})
			return
		}
		body = map[string]any{"subject": subject, "scope": scope}
		d.Scope = scope
	case "deny":
	default:
		c.render(w, http.StatusBadRequest, page{Problem: "Approve or deny."})
		return
	}
	err = c.call(r.Context(), http.MethodPost, "/v1/delegations/"+id+"/"+decision, body, nil)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && (ae.Code == "DELEGATION_EXPIRED" || ae.Code == "DELEGATION_REVOKED"):
		c.render(w, http.StatusConflict, page{Problem: "This request was decided already or has expired."})
		return
	case err != nil:
		c.Logger.Error("consent: decide", "err", err.Error())
		c.render(w, http.StatusBadGateway, page{Problem: "The authority could not be asked; try again in a moment."})
		return
	}
	c.Logger.Info("consent", "delegation", id, "decision", decision)
	done := "Denied. The agent gets no access."
	if decision == "approve" {
		done = "Approved. The agent picks up its access by itself; you can close this page."
	}
	c.render(w, http.StatusOK, page{Done: done, Request: view(d, "")})
}

func statusText(s string) string {
	switch s {
	case "approved":
		return "This request was approved already."
	case "denied":
		return "This request was denied."
	case "expired":
		return "This request has expired: ask the agent to start again."
	}
	return "This request is " + s + "."
}

// page is what the template shows.
type page struct {
	Problem string
	Done    string
	Code    string
	Request *requestView
}

type requestView struct {
	ID, Audience, Agent, Expires, CSRF string
	Scope                              []scopeView
}

type scopeView struct{ Pattern, Meaning string }

func view(d delegation, csrf string) *requestView {
	v := &requestView{ID: d.ID, Audience: d.Audience, Agent: d.Agent, CSRF: csrf}
	if t, err := time.Parse(time.RFC3339, d.ExpiresAt); err == nil {
		v.Expires = t.UTC().Format("15:04:05 UTC")
	}
	for _, p := range d.Scope {
		v.Scope = append(v.Scope, scopeView{p, explain(p)})
	}
	return v
}

// explain says in words what a capability pattern lets an agent use.
func explain(p string) string {
	switch {
	case p == "*":
		return "everything the site's pages offer agents"
	case strings.Count(p, "*") == 1 && strings.HasSuffix(p, "*"):
		return "every capability whose name starts with “" + strings.TrimSuffix(p, "*") + "”"
	case !strings.Contains(p, "*"):
		return "the capability “" + p + "” only"
	}
	return "the capabilities whose names match “" + p + "” (* stands for anything)"
}

func (c *consent) render(w http.ResponseWriter, status int, p page) {
	renderScreen(w, status, consentTemplate, p)
}

// consentTemplate is the consent screen (screenTemplate): every
// agent-supplied string (the agent's name, the patterns, the audience) is
// escaped for where it lands.
var consentTemplate = screenTemplate("consent", `{{define "heading"}}Allow an agent?{{end}}
{{- define "style"}}.agent{font-weight:600;white-space:pre-wrap;word-break:break-all}code{background:#f2f2f2;padding:0 .25rem}
ul{list-style:none;padding:0}li{margin:.5rem 0}.problem{color:#a00}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}{{end}}
{{- define "body"}}{{if and .Request (not .Done)}}{{with .Request}}
<form method="post" action="/pling/consent">
{{with $.Code}}<p>Code <code id="user-code">{{.}}</code>: it must be the code the agent showed you.</p>{{end}}
<p>An agent that calls itself <span class="agent" id="agent">{{.Agent}}</span> asks to act for you on <code id="audience">{{.Audience}}</code>.
Its name is its own: check that you started it.</p>
<p>It may use (untick what it should not):</p>
<ul id="scope">{{range .Scope}}<li><label><input type="checkbox" name="scope" value="{{.Pattern}}" checked> <code>{{.Pattern}}</code>: {{.Meaning}}</label></li>
{{end}}</ul>
<p>The request lapses at {{.Expires}}.</p>
{{template "decide" .}}
</form>{{end}}{{else if not .Done}}
<form method="get" action="/pling/consent">
<p><label>The code the agent showed you: <input name="code" id="code" autocomplete="off" maxlength="16" placeholder="BCDF-GHJK"></label>
<button type="submit">Continue</button></p>
</form>{{end}}
{{with .Done}}{{with $.Request}}<p>Agent: <span class="agent">{{.Agent}}</span> on <code>{{.Audience}}</code>{{if .Scope}}, scope:{{range .Scope}} <code>{{.Pattern}}</code>{{end}}{{end}}.</p>{{end}}{{end}}{{end}}`)
