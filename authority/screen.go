package authority

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
)

// The screens a person decides on — the consent screen (ConsentPath) and
// the approval screen (ApprovalPath) — are served by the authority, on its
// own origin, never by the site: a script of the site's pages runs with
// the person's cookies on the site's origin, so a screen served there can
// be fetched and posted by that script (it reads the CSRF token from the
// HTML) and a page would approve its own request. On the authority's
// origin the same script gets an answer it may not read (no CORS on these
// paths), cannot frame the screen (frame-ancestors 'none'), cannot read
// its cookie (HttpOnly), and its POST is refused (Fetch metadata: not
// same-origin; and it has no CSRF token). docs/authority.md "Who can
// decide"; RATIONALE.md "Why are the consent and approval screens the
// authority's, not the site's?".

// Paths of the screens on the authority.
const (
	ConsentPath  = "/consent"
	ApprovalPath = "/approve"
)

// screenCookie pairs the screens' CSRF tokens with a browser (double
// submit, the token an HMAC of the cookie that only the authority can
// make) and names the browser when Config.ScreenSubject is not set.
const screenCookie = "pling_screen"

// maxScreenForm bounds a POSTed form (64 patterns of 256 bytes at most).
const maxScreenForm = 32 << 10

// screenSecret derives the key of the screens' CSRF tokens and browser
// pseudonyms: from the KEK when there is one (every instance sharing the
// store has it, so a form shown by one instance is accepted by another),
// else random for this process.
func screenSecret(kek []byte) []byte {
	if len(kek) == 0 {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	}
	m := hmac.New(sha256.New, kek)
	m.Write([]byte("pling authority screens"))
	return m.Sum(nil)
}

func (s *Server) csrf(browser, what string) string {
	m := hmac.New(sha256.New, s.screenKey)
	m.Write([]byte("csrf\x00" + browser + "\x00" + what))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// screenSubject is the person deciding: Config.ScreenSubject, or, with
// none (no login in front of the authority), the browser's pseudonym:
// "browser:" and a digest of its screen cookie, so two browsers are two
// people and never the agent's self-chosen name.
func (s *Server) screenSubject(r *http.Request, browser string) (string, bool) {
	if s.cfg.ScreenSubject != nil {
		return s.cfg.ScreenSubject(r)
	}
	m := hmac.New(sha256.New, s.screenKey)
	m.Write([]byte("subject\x00" + browser))
	return "browser:" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16]), true
}

// screenHeaders are the screens' headers: never cached, no referrer (the
// user code and the approval id are in the URL), no script (a screen
// that asks for a passkey allows the authority's own: passkeyCSP), never
// framed, not readable by another origin's no-cors fetch, and no window
// handle for the page that opened it.
func screenHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// browserID is the value of the screens' cookie, a random pseudonym of
// the browser, set when absent: HttpOnly (no script reads it, the site's
// included where it shares the authority's host) and SameSite=Strict.
func browserID(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(screenCookie); err == nil && len(ck.Value) >= 22 && len(ck.Value) <= 64 {
		return ck.Value
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: screenCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return v
}

// checkDecision is what every decision POST passes first: same-origin by
// Fetch metadata or Origin (a page of the site is another origin, even on
// the same site), and this browser's CSRF token for what. It answers and
// reports false when the request fails either.
func (s *Server) checkDecision(w http.ResponseWriter, r *http.Request, what string, refuse func(status int, problem string)) (browser string, ok bool) {
	if err := s.screenCOP.Check(r); err != nil {
		refuse(http.StatusForbidden, "This form may only be sent from this screen.")
		return "", false
	}
	ck, err := r.Cookie(screenCookie)
	if err != nil || what == "" || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(s.csrf(ck.Value, what))) {
		refuse(http.StatusForbidden, "This form is not one this screen gave you: open the link again.")
		return "", false
	}
	return ck.Value, true
}

// readDecision reads the Approve/Deny form a screen posts about one row
// (kind "approval" or "consent"): the bounded form, its id and decision,
// and the checkDecision checks with the CSRF token bound to kind and the id.
// An id that is not one the authority issues binds nothing, so its form is
// refused. On false the answer has been written with refuse.
func (s *Server) readDecision(w http.ResponseWriter, r *http.Request, kind string, refuse func(status int, problem string)) (id, decision, browser string, ok bool) {
	if !readForm(w, r) {
		refuse(http.StatusBadRequest, "The form could not be read.")
		return "", "", "", false
	}
	id, decision = r.PostForm.Get("id"), r.PostForm.Get("decision")
	what := ""
	if validID(id) {
		what = kind + "\x00" + id
	}
	browser, ok = s.checkDecision(w, r, what, refuse)
	return id, decision, browser, ok
}

// readForm reads a POSTed form, bounded.
func readForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxScreenForm)
	return r.ParseForm() == nil
}

// screenLayout is what the screens share: the head, the base style, the
// heading, the problem and done lines, and the Approve and Deny buttons of
// a decision form. A screen defines "heading", "style" (its own rules)
// and "body", and sets .Problem and .Done.
const screenLayout = `{{define "screen"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{template "heading"}} · Pling authority</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
{{template "style"}}</style>
</head><body>
<h1>{{template "heading"}}</h1>
{{with .Problem}}<p class="problem" role="alert" id="problem">{{.}}</p>{{end}}
{{with .Done}}<p id="done" role="status">{{.}}</p>{{end}}
{{template "body" .}}
</body></html>
{{end}}{{define "decide"}}<input type="hidden" name="id" value="{{.ID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>{{end}}`

// screenTemplate is a screen: screenLayout with the definitions in
// screen, parsed as html/template, so every string a page or an agent
// supplied is escaped for where it lands. The screens have no script but
// the authority's /passkey.js where a passkey is asked for (passkey.go).
func screenTemplate(name, screen string) *template.Template {
	return template.Must(template.New(name).Parse(`{{template "screen" .}}` + screenLayout + screen))
}

// renderScreen writes a screen with data p and status.
func renderScreen(w http.ResponseWriter, status int, t *template.Template, p any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = t.Execute(w, p)
}

// serveScreen answers a request for a screen with screenHeaders: show
// answers GET and HEAD, decide POST, any other method is refused.
func serveScreen(w http.ResponseWriter, r *http.Request, show, decide http.HandlerFunc) {
	screenHeaders(w)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		show(w, r)
	case http.MethodPost:
		decide(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
