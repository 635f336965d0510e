package authority

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/pling-go/pling/schema"
)

// The approval screen (ApprovalPath?id=…): a page configured with
// approvals "authority" sent its challenge here; a person opens this
// screen with the approval's id, sees what the page asks them to approve
// and approves or denies. It is the authority's, on the authority's
// origin (screen.go): the approval's id is known to every script of the
// page that asked, and is no credential.

// approvalView is what the approval screen shows. Capability, Record and
// the input's values are what runs: computed from the request the
// binding was computed from. Title, Risk, Reason, Agent, RecordLabel and
// the parameters' titles are the page's words and shown as such; Summary
// is the page's words too, and bound.
type approvalView struct {
	ID, Audience, Capability, Record, Expires, CSRF string
	// Subject and SessionAgent are the asking session's, from the
	// delegation the person consented to (not the page's words): whose
	// session asks, and the agent's name as it was shown then.
	Subject, SessionAgent                                        string
	Title, Risk, Summary, Reason, Agent, RecordKind, RecordLabel string
	Input                                                        []schema.ApprovalField
	More                                                         int
	// PasskeyNeeded: the site requires the person's passkey for this
	// approval; PasskeyOptions are navigator.credentials.get's options
	// ("" when the subject has registered none: Approve is not offered).
	PasskeyNeeded  bool
	PasskeyOptions string
}

func viewApproval(a Approval, csrf string) *approvalView {
	var sh approvalShown
	_ = json.Unmarshal([]byte(a.Challenge), &sh)
	rq, pg := sh.Request, sh.Page
	order := make([]string, 0, len(pg.Input))
	titles := make(map[string]string, len(pg.Input))
	for _, f := range pg.Input {
		order = append(order, f.Name)
		titles[f.Name] = f.Title
	}
	input, more := rq.Fields(order, titles)
	v := &approvalView{ID: a.ID, Audience: a.Audience, Capability: rq.Capability, Record: rq.Record(), CSRF: csrf,
		Title: pg.Title, Risk: string(pg.Risk), Summary: rq.Summary, Reason: pg.Reason, Agent: pg.Agent,
		Input: input, More: more, Expires: time.UnixMilli(a.ExpiresMs).UTC().Format("15:04:05 UTC")}
	if r := pg.Record; r != nil && r.ID == v.Record {
		v.RecordKind, v.RecordLabel = r.Kind, r.Label
	}
	return v
}

func (s *Server) serveApproval(w http.ResponseWriter, r *http.Request) {
	serveScreen(w, r, s.showApproval, s.decideApprovalScreen)
}

// screenApproval looks the approval up for a screen; false when it was
// answered (no store of approvals, none with the id, the store failed).
func (s *Server) screenApproval(w http.ResponseWriter, r *http.Request, id string) (ApprovalStore, Approval, bool) {
	st, ok := s.raw.(ApprovalStore)
	if !ok {
		renderApproval(w, http.StatusNotFound, page{Problem: "This authority keeps no approvals."})
		return nil, Approval{}, false
	}
	a, err := st.Approval(r.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		renderApproval(w, http.StatusNotFound, page{Problem: "No approval has this id. Open the link the page showed you again."})
		return nil, a, false
	case err != nil:
		s.screenFailed(w, r, err, renderApproval)
		return nil, a, false
	}
	if a.Status == StatusPending && s.nowMs() >= a.ExpiresMs {
		a.Status = StatusExpired
	}
	return st, a, true
}

// whoAsks fills in whose session asks for the approval: the subject the
// person consented as, and the agent's name they were shown then. Left
// empty when the session or its delegation is gone.
func (s *Server) whoAsks(r *http.Request, a Approval, v *approvalView) *approvalView {
	se, err := s.cfg.Store.Session(r.Context(), a.SessionID)
	if err != nil {
		return v
	}
	d, err := s.cfg.Store.Delegation(r.Context(), se.DelegationID)
	if err != nil {
		return v
	}
	v.Subject, v.SessionAgent = d.Subject, d.Agent
	return v
}

func (s *Server) showApproval(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if !validID(id) {
		renderApproval(w, http.StatusBadRequest, page{Problem: "This link names no approval."})
		return
	}
	_, a, ok := s.screenApproval(w, r, id)
	if !ok {
		return
	}
	if a.Status != StatusPending {
		renderApproval(w, http.StatusOK, page{Done: decidedBefore(approvalScreen, a.Status), Approval: s.whoAsks(r, a, viewApproval(a, ""))})
		return
	}
	v := s.whoAsks(r, a, viewApproval(a, s.csrf(browserID(w, r), "approval\x00"+a.ID)))
	if s.passkeyRequired(a) {
		v.PasskeyNeeded = true
		opts, err := s.approvalPasskeyOptions(r.Context(), a, v.Subject)
		if err != nil {
			s.screenFailed(w, r, err, renderApproval)
			return
		}
		v.PasskeyOptions = opts
		w.Header().Set("Content-Security-Policy", passkeyCSP)
	}
	renderApproval(w, http.StatusOK, page{Approval: v})
}

func (s *Server) decideApprovalScreen(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, problem string) { renderApproval(w, status, page{Problem: problem}) }
	id, decision, _, ok := s.readDecision(w, r, "approval", refuse)
	if !ok {
		return
	}
	if decision != "approve" && decision != "deny" {
		refuse(http.StatusBadRequest, "Approve or deny.")
		return
	}
	st, a, ok := s.screenApproval(w, r, id)
	if !ok {
		return
	}
	status := StatusDenied
	if decision == "approve" {
		status = StatusApproved
	}
	var err error
	if status == StatusApproved && s.passkeyRequired(a) {
		// The site requires the person's passkey: Approve without a
		// user-verified assertion over this approval's challenge is
		// refused, and nothing is approved.
		err = s.approveWithPasskey(r.Context(), a, r.PostForm.Get("assertion"))
		if errors.Is(err, errPasskey) {
			s.cfg.Logger.Info("approval refused: no valid passkey assertion", "approval", id)
			refuse(http.StatusForbidden, "This action needs your passkey, and no valid one was given: nothing was approved.")
			return
		}
	} else {
		err = st.DecideApproval(r.Context(), id, status, s.nowMs())
	}
	if !s.screenWrote(w, r, err, renderApproval, "This approval was decided already or has expired.") {
		return
	}
	s.cfg.Logger.Info("approval", "approval", id, "decision", decision)
	done := decidedText(status, "Approved. The page runs the action once; you can close this page.", "Denied. The page runs nothing.")
	renderApproval(w, http.StatusOK, page{Done: done, Approval: viewApproval(a, "")})
}

func renderApproval(w http.ResponseWriter, status int, p page) {
	renderScreen(w, status, approvalTemplate, p)
}

// approvalTemplate is the approval screen (screenTemplate): every string
// is escaped for where it lands; what runs (the capability, the record,
// the input's values) is set apart from the page's words (class "page",
// under "The page says").
var approvalTemplate = screenTemplate("approval", `{{define "heading"}}Approve an action?{{end}}
{{- define "style"}}.page{white-space:pre-wrap;word-break:break-word;font-style:italic}.run{white-space:pre-wrap;word-break:break-word}
code{background:#f2f2f2;padding:0 .25rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}
.problem{color:#a00}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}{{end}}
{{- define "body"}}{{with .Approval}}
<p>A page of <code id="audience">{{.Audience}}</code> asks you to let it run{{if .Subject}}, for the session of
<strong id="subject">{{.Subject}}</strong>{{with .SessionAgent}}, whose agent calls itself <span class="page" id="session-agent">{{.}}</span>{{end}}{{end}}:</p>
<dl id="challenge">
<dt>Action</dt><dd><code id="capability">{{.Capability}}</code></dd>
{{with .Record}}<dt>On</dt><dd><code id="record">{{.}}</code></dd>{{end}}
{{range .Input}}<dt><code>{{.Name}}</code></dt><dd class="run input">{{.Value}}{{if .Redacted}} (hidden){{end}}{{if .Cut}} (cut, {{.Length}} characters){{end}}</dd>
{{end}}{{if .More}}<dt>…</dt><dd>{{.More}} more parameters, not shown</dd>{{end}}
</dl>
<p>The page says (its words, not checked):</p>
<dl id="page-words">
{{if .Agent}}<dt>Agent</dt><dd class="page" id="agent">{{.Agent}}</dd>{{end}}
<dt>Title</dt><dd class="page" id="title">{{.Title}}{{with .Risk}} ({{.}}){{end}}</dd>
{{if .RecordLabel}}<dt>The row</dt><dd class="page" id="record-label">{{.RecordKind}} {{.RecordLabel}}</dd>{{end}}
{{with .Summary}}<dt>What it does</dt><dd class="page" id="summary">{{.}}</dd>{{end}}
{{with .Reason}}<dt>Why you are asked</dt><dd class="page" id="reason">{{.}}</dd>{{end}}
{{range .Input}}{{if ne .Title .Name}}<dt><code>{{.Name}}</code></dt><dd class="page">{{.Title}}</dd>{{end}}
{{end}}</dl>
<p>The approval covers exactly this action, row and input for this one request, and lapses at {{.Expires}}.</p>
{{if not $.Done}}{{if .PasskeyNeeded}}<p id="passkey-needed">This action needs your passkey: Approve asks for it.</p>
<p class="problem" role="alert" id="passkey-problem" hidden></p>
{{if .PasskeyOptions}}<form method="post" action="`+ApprovalPath+`" data-passkey-get="{{.PasskeyOptions}}">
<input type="hidden" name="assertion" value="">
{{template "decide" .}}
</form><script src="`+passkeyScriptPath+`"></script>
{{else}}<p class="problem" id="no-passkey">You have no passkey here, so you cannot approve this: register one at <a href="`+PasskeysPath+`">your passkeys</a>, then open this link again.</p>
<form method="post" action="`+ApprovalPath+`"><input type="hidden" name="id" value="{{.ID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="deny" id="deny">Deny</button></form>{{end}}
{{else}}<form method="post" action="`+ApprovalPath+`">
{{template "decide" .}}
</form>{{end}}{{end}}{{end}}{{end}}`)
