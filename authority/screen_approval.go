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

type approvalView struct {
	ID, Audience, Capability, Title, Risk, Summary, Reason, Agent, Record, Expires, CSRF string
	Input                                                                                []schema.ApprovalField
	More                                                                                 int
}

func viewApproval(a Approval, csrf string) *approvalView {
	var c schema.SurfaceApprovalChallenge
	_ = json.Unmarshal([]byte(a.Challenge), &c)
	v := &approvalView{ID: a.ID, Audience: a.Audience, Capability: c.Capability, Title: c.Title, Risk: string(c.Risk),
		Summary: c.Summary, Reason: c.Reason, Agent: c.Agent, Input: c.Input, More: c.More, CSRF: csrf,
		Expires: time.UnixMilli(a.ExpiresMs).UTC().Format("15:04:05 UTC")}
	if r := c.Record; r != nil {
		v.Record = r.Kind + " " + r.ID
		if r.Label != "" {
			v.Record += " (" + r.Label + ")"
		}
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
		renderApproval(w, http.StatusOK, page{Done: approvalStatusText(a.Status), Approval: viewApproval(a, "")})
		return
	}
	renderApproval(w, http.StatusOK, page{Approval: viewApproval(a, s.csrf(browserID(w, r), "approval\x00"+a.ID))})
}

func (s *Server) decideApprovalScreen(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, problem string) { renderApproval(w, status, page{Problem: problem}) }
	if !readForm(w, r) {
		refuse(http.StatusBadRequest, "The form could not be read.")
		return
	}
	id, decision := r.PostForm.Get("id"), r.PostForm.Get("decision")
	what := ""
	if validID(id) {
		what = "approval\x00" + id
	}
	if _, ok := s.checkDecision(w, r, what, refuse); !ok {
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
	err := st.DecideApproval(r.Context(), id, status, s.nowMs())
	switch {
	case errors.Is(err, ErrConflict):
		refuse(http.StatusConflict, "This approval was decided already or has expired.")
		return
	case err != nil:
		s.screenFailed(w, r, err, renderApproval)
		return
	}
	s.cfg.Logger.Info("approval", "approval", id, "decision", decision)
	done := "Denied. The page runs nothing."
	if status == StatusApproved {
		done = "Approved. The page runs the action once; you can close this page."
	}
	renderApproval(w, http.StatusOK, page{Done: done, Approval: viewApproval(a, "")})
}

func approvalStatusText(s string) string {
	switch s {
	case "approved":
		return "This action was approved already."
	case "denied":
		return "This action was denied."
	case "expired":
		return "This approval has expired: the page runs nothing."
	}
	return "This approval is " + s + "."
}

func renderApproval(w http.ResponseWriter, status int, p page) {
	renderScreen(w, status, approvalTemplate, p)
}

// approvalTemplate is the approval screen (screenTemplate): every string
// the page sent (title, summary, reason, agent, input names and values) is
// escaped for where it lands, and is marked as the page's words.
var approvalTemplate = screenTemplate("approval", `{{define "heading"}}Approve an action?{{end}}
{{- define "style"}}.page{white-space:pre-wrap;word-break:break-word}code{background:#f2f2f2;padding:0 .25rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}
.problem{color:#a00}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}{{end}}
{{- define "body"}}{{with .Approval}}
<p>{{if .Agent}}An AI agent that calls itself <span class="page" id="agent">{{.Agent}}</span>{{else}}A caller{{end}} asks to run, on <code id="audience">{{.Audience}}</code>:</p>
<dl id="challenge">
<dt>Action</dt><dd><span class="page" id="title">{{.Title}}</span> (<code id="capability">{{.Capability}}</code>{{with .Risk}}, {{.}}{{end}})</dd>
{{with .Record}}<dt>On</dt><dd class="page" id="record">{{.}}</dd>{{end}}
{{with .Summary}}<dt>What it does</dt><dd class="page" id="summary">{{.}}</dd>{{end}}
{{with .Reason}}<dt>Why you are asked</dt><dd class="page" id="reason">{{.}}</dd>{{end}}
{{range .Input}}<dt class="page">{{.Title}}</dt><dd class="page input">{{.Value}}</dd>
{{end}}{{if .More}}<dt>…</dt><dd>{{.More}} more</dd>{{end}}
</dl>
<p>These words are the page's. The approval covers exactly this request of this page and lapses at {{.Expires}}.</p>
{{if not $.Done}}<form method="post" action="`+ApprovalPath+`">
{{template "decide" .}}
</form>{{end}}{{end}}{{end}}`)
