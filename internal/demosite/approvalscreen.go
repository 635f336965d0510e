package demosite

import (
	"crypto/hmac"
	"errors"
	"net/http"
	"time"

	"github.com/pling-go/pling/schema"
)

// The approval screen: the site's backend side of an approval given
// outside the page (docs/authority.md "Approvals outside the page"). A
// page configured with approvals "authority" sent its challenge to the
// authority; a person opens this screen with the approval's id, sees what
// the page asks them to approve — the capability, the page's summary and
// the input, every string escaped — and approves or denies. The screen
// calls the authority's operator routes with the operator key, which never
// reaches the browser; it has no script, a strict CSP with
// frame-ancestors 'none', a CSRF token paired with a cookie, and a
// same-origin check on the decision. It is served with the consent screen
// (Options.Consent: the same authority and operator key).

// ApprovalPath is where the approval screen is served: ApprovalPath?id=….
const ApprovalPath = "/pling/approve"

// approvalCookie pairs the approval screen's CSRF token with a browser.
const approvalCookie = "pling_approve"

// approvalRecord is what the operator route says of an approval.
type approvalRecord struct {
	ID          string                          `json:"id"`
	Audience    string                          `json:"audience"`
	Binding     string                          `json:"binding"`
	Challenge   schema.SurfaceApprovalChallenge `json:"challenge"`
	Status      string                          `json:"status"`
	ExpiresAtMs int64                           `json:"expiresAtMs"`
}

type approvalPage struct {
	Problem  string
	Done     string
	Approval *approvalView
}

type approvalView struct {
	ID, Audience, Capability, Title, Risk, Summary, Reason, Agent, Record, Expires, CSRF string
	Input                                                                                []schema.ApprovalField
	More                                                                                 int
}

func viewApproval(a approvalRecord, csrf string) *approvalView {
	c := a.Challenge
	v := &approvalView{ID: a.ID, Audience: a.Audience, Capability: c.Capability, Title: c.Title, Risk: string(c.Risk),
		Summary: c.Summary, Reason: c.Reason, Agent: c.Agent, Input: c.Input, More: c.More, CSRF: csrf,
		Expires: time.UnixMilli(a.ExpiresAtMs).UTC().Format("15:04:05 UTC")}
	if r := c.Record; r != nil {
		v.Record = r.Kind + " " + r.ID
		if r.Label != "" {
			v.Record += " (" + r.Label + ")"
		}
	}
	return v
}

func (c *consent) approvalCSRF(browser, id string) string { return c.csrf(browser, "approval\x00"+id) }

// serveApproval serves ApprovalPath.
func (c *consent) serveApproval(w http.ResponseWriter, r *http.Request) {
	serveScreen(w, r, c.showApproval, c.decideApproval)
}

func (c *consent) lookupApproval(w http.ResponseWriter, r *http.Request, id string) (approvalRecord, bool) {
	var a approvalRecord
	err := c.call(r.Context(), http.MethodGet, "/v1/approvals/"+id, nil, &a)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Code == "DELEGATION_NOT_FOUND":
		renderApproval(w, http.StatusNotFound, approvalPage{Problem: "No approval has this id. Open the link the page showed you again."})
		return a, false
	case err != nil:
		c.Logger.Error("approval: lookup", "err", err.Error())
		renderApproval(w, http.StatusBadGateway, approvalPage{Problem: "The authority could not be asked; try again in a moment."})
		return a, false
	}
	return a, true
}

func (c *consent) showApproval(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if !validID(id) {
		renderApproval(w, http.StatusBadRequest, approvalPage{Problem: "This link names no approval of this site."})
		return
	}
	a, ok := c.lookupApproval(w, r, id)
	if !ok {
		return
	}
	if a.Status != "pending" {
		renderApproval(w, http.StatusOK, approvalPage{Done: approvalStatusText(a.Status), Approval: viewApproval(a, "")})
		return
	}
	renderApproval(w, http.StatusOK, approvalPage{Approval: viewApproval(a, c.approvalCSRF(browserID(w, r, approvalCookie, ApprovalPath), a.ID))})
}

func (c *consent) decideApproval(w http.ResponseWriter, r *http.Request) {
	if err := c.cop.Check(r); err != nil {
		renderApproval(w, http.StatusForbidden, approvalPage{Problem: "This form may only be sent from this site's own page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxConsentForm)
	if err := r.ParseForm(); err != nil {
		renderApproval(w, http.StatusBadRequest, approvalPage{Problem: "The form could not be read."})
		return
	}
	id, decision := r.PostForm.Get("id"), r.PostForm.Get("decision")
	ck, err := r.Cookie(approvalCookie)
	if !validID(id) || err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.approvalCSRF(ck.Value, id))) {
		renderApproval(w, http.StatusForbidden, approvalPage{Problem: "This form is not one this page gave you: open the link again."})
		return
	}
	if decision != "approve" && decision != "deny" {
		renderApproval(w, http.StatusBadRequest, approvalPage{Problem: "Approve or deny."})
		return
	}
	a, ok := c.lookupApproval(w, r, id)
	if !ok {
		return
	}
	err = c.call(r.Context(), http.MethodPost, "/v1/approvals/"+id+"/"+decision, nil, nil)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Code == "DELEGATION_EXPIRED":
		renderApproval(w, http.StatusConflict, approvalPage{Problem: "This approval was decided already or has expired."})
		return
	case err != nil:
		c.Logger.Error("approval: decide", "err", err.Error())
		renderApproval(w, http.StatusBadGateway, approvalPage{Problem: "The authority could not be asked; try again in a moment."})
		return
	}
	c.Logger.Info("approval", "approval", id, "decision", decision)
	done := "Denied. The page runs nothing."
	if decision == "approve" {
		done = "Approved. The page runs the action once; you can close this page."
	}
	renderApproval(w, http.StatusOK, approvalPage{Done: done, Approval: viewApproval(a, "")})
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

func renderApproval(w http.ResponseWriter, status int, p approvalPage) {
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
{{if not $.Done}}<form method="post" action="/pling/approve">
{{template "decide" .}}
</form>{{end}}{{end}}{{end}}`)
