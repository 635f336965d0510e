package authority

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The consent screen (ConsentPath): the agent asked for a session and sent
// its person here with a user code; the screen shows what was asked — by
// whom (the agent's own, untrusted, name), for which origin, which
// capability patterns — lets the person narrow the scope and approve or
// deny. It is the authority's, on the authority's origin (screen.go).

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

// validID is the authority's id alphabet (base64url).
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

func (s *Server) serveConsent(w http.ResponseWriter, r *http.Request) {
	serveScreen(w, r, s.showConsent, s.decideConsent)
}

// screenDelegation is a delegation as a screen shows it (expired when its
// wait lapsed).
func (s *Server) screenDelegation(d Delegation) Delegation {
	if d.Status == StatusPending && s.nowMs() >= d.ExpiresMs {
		d.Status = StatusExpired
	}
	return d
}

func (s *Server) showConsent(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("code")
	if raw == "" {
		renderConsent(w, http.StatusOK, page{})
		return
	}
	code, ok := normalizeCode(raw)
	if !ok {
		renderConsent(w, http.StatusBadRequest, page{Problem: "That is not a code of this site: a code is eight letters, like BCDF-GHJK."})
		return
	}
	d, err := s.cfg.Store.DelegationByUserCode(r.Context(), code)
	switch {
	case errors.Is(err, ErrNotFound):
		renderConsent(w, http.StatusNotFound, page{Problem: "No request has the code " + code + ". Check the code the agent showed you."})
		return
	case err != nil:
		s.screenFailed(w, r, err, renderConsent)
		return
	}
	d = s.screenDelegation(d)
	if d.Status != StatusPending {
		renderConsent(w, http.StatusOK, page{Done: decidedBefore(consentScreen, d.Status), Request: view(d, "")})
		return
	}
	renderConsent(w, http.StatusOK, page{Request: view(d, s.csrf(browserID(w, r), "consent\x00"+d.ID)), Code: code})
}

// screenFailed answers a store error on a screen: logged, never shown.
func (s *Server) screenFailed(w http.ResponseWriter, r *http.Request, err error, render func(http.ResponseWriter, int, page)) {
	s.storeErrors.Inc()
	s.cfg.Logger.Error("store", "route", r.URL.Path, "err", err.Error())
	render(w, http.StatusServiceUnavailable, page{Problem: "The authority could not complete this; try again in a moment."})
}

// screenWrote answers the store write a screen's form asked for: a
// conflict (the row was decided or written meanwhile) is refused with
// conflict and 409, any other error is a store failure. It reports whether
// the write went through, that is whether err is nil.
func (s *Server) screenWrote(w http.ResponseWriter, r *http.Request, err error, render func(http.ResponseWriter, int, page), conflict string) bool {
	switch {
	case errors.Is(err, ErrConflict):
		render(w, http.StatusConflict, page{Problem: conflict})
		return false
	case err != nil:
		s.screenFailed(w, r, err, render)
		return false
	}
	return true
}

func (s *Server) decideConsent(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, problem string) { renderConsent(w, status, page{Problem: problem}) }
	id, decision, browser, ok := s.readDecision(w, r, "consent", refuse)
	if !ok {
		return
	}
	d, err := s.cfg.Store.Delegation(r.Context(), id)
	if err != nil {
		s.screenFailed(w, r, err, renderConsent)
		return
	}
	d = s.screenDelegation(d)
	var status, subject string
	scope := d.Scope
	switch decision {
	case "approve":
		scope = nil
		for _, p := range r.PostForm["scope"] {
			// Only patterns that were asked for: the checkboxes narrow,
			// they cannot add.
			if slices.Contains(d.Scope, p) && !slices.Contains(scope, p) {
				scope = append(scope, p)
			}
		}
		if len(scope) == 0 {
			renderConsent(w, http.StatusBadRequest, page{Problem: "Tick at least one permission to approve, or deny the request.", Request: view(d, s.csrf(browser, "consent\x00"+id))})
			return
		}
		if subject, ok = s.screenSubject(r, browser); !ok || !validText(subject, 256) {
			refuse(http.StatusForbidden, "Sign in to approve.")
			return
		}
		status = StatusApproved
	case "deny":
		status = StatusDenied
	default:
		refuse(http.StatusBadRequest, "Approve or deny.")
		return
	}
	if d.Status != StatusPending {
		refuse(http.StatusConflict, "This request was decided already or has expired.")
		return
	}
	err = s.cfg.Store.Decide(r.Context(), d.ID, status, scope, subject, s.nowMs())
	if !s.screenWrote(w, r, err, renderConsent, "This request was decided already or has expired.") {
		return
	}
	s.cfg.Logger.Info("consent", "delegation", id, "decision", decision)
	if status == StatusApproved {
		d.Scope = scope
	}
	done := decidedText(status, "Approved. The agent picks up its access by itself; you can close this page.", "Denied. The agent gets no access.")
	renderConsent(w, http.StatusOK, page{Done: done, Request: view(d, "")})
}

// The decision screens, as the columns of their wording tables.
const (
	approvalScreen = iota
	consentScreen
)

// decidedBeforeText is what a decision screen says, by status, about a row
// that is no longer pending; screenNoun names the row for any other status.
var (
	decidedBeforeText = map[string][2]string{
		StatusApproved: {"This action was approved already.", "This request was approved already."},
		StatusDenied:   {"This action was denied.", "This request was denied."},
		StatusExpired:  {"This approval has expired: the page runs nothing.", "This request has expired: ask the agent to start again."},
	}
	screenNoun = [2]string{"approval", "request"}
)

func decidedBefore(screen int, status string) string {
	if t, ok := decidedBeforeText[status]; ok {
		return t[screen]
	}
	return "This " + screenNoun[screen] + " is " + status + "."
}

// decidedText is the line a decision screen shows once the decision is
// stored.
func decidedText(status, approved, denied string) string {
	if status == StatusApproved {
		return approved
	}
	return denied
}

// page is what a screen's template shows.
type page struct {
	Problem  string
	Done     string
	Code     string
	Request  *requestView
	Approval *approvalView
	Passkeys *passkeyView
}

type requestView struct {
	ID, Audience, Agent, Expires, CSRF string
	Scope                              []scopeView
}

type scopeView struct{ Pattern, Meaning string }

func view(d Delegation, csrf string) *requestView {
	v := &requestView{ID: d.ID, Audience: d.Audience, Agent: d.Agent, CSRF: csrf,
		Expires: time.UnixMilli(d.ExpiresMs).UTC().Format("15:04:05 UTC")}
	scope := d.Scope
	if d.ApprovedScope != nil {
		scope = d.ApprovedScope
	}
	for _, p := range scope {
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

func renderConsent(w http.ResponseWriter, status int, p page) {
	renderScreen(w, status, consentTemplate, p)
}

// consentTemplate is the consent screen (screenTemplate): every
// agent-supplied string (the agent's name, the patterns, the audience) is
// escaped for where it lands.
var consentTemplate = screenTemplate("consent", `{{define "heading"}}Allow an agent?{{end}}
{{- define "style"}}.agent{font-weight:600;white-space:pre-wrap;word-break:break-all}code{background:#f2f2f2;padding:0 .25rem}
ul{list-style:none;padding:0}li{margin:.5rem 0}.problem{color:#a00}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}{{end}}
{{- define "body"}}{{if and .Request (not .Done)}}{{with .Request}}
<form method="post" action="`+ConsentPath+`">
{{with $.Code}}<p>Code <code id="user-code">{{.}}</code>: it must be the code the agent showed you.</p>{{end}}
<p>An agent that calls itself <span class="agent" id="agent">{{.Agent}}</span> asks to act for you on <code id="audience">{{.Audience}}</code>.
Its name is its own: check that you started it.</p>
<p>It may use (untick what it should not):</p>
<ul id="scope">{{range .Scope}}<li><label><input type="checkbox" name="scope" value="{{.Pattern}}" checked> <code>{{.Pattern}}</code>: {{.Meaning}}</label></li>
{{end}}</ul>
<p>The request lapses at {{.Expires}}.</p>
{{template "decide" .}}
</form>{{end}}{{else if not .Done}}
<form method="get" action="`+ConsentPath+`">
<p><label>The code the agent showed you: <input name="code" id="code" autocomplete="off" maxlength="16" placeholder="BCDF-GHJK"></label>
<button type="submit">Continue</button></p>
</form>{{end}}
{{with .Done}}{{with $.Request}}<p>Agent: <span class="agent">{{.Agent}}</span> on <code>{{.Audience}}</code>{{if .Scope}}, scope:{{range .Scope}} <code>{{.Pattern}}</code>{{end}}{{end}}.</p>{{end}}{{end}}{{end}}`)
