package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/pling-go/pling/agent"
)

// Which approval the host may be asked to open: the page names an
// approval id in its waiting notice, but any script of the page can fire
// that notice, naming any approval — one it made itself with the
// session's token, for another action or other input. So before the
// bridge asks its host to open the screen, it asks the authority itself,
// with the session's token, what that approval is (GET
// /v1/sessions/{sessionId}/approvals/{id}), and opens it only when it
// belongs to the call the bridge is making: the same session (the route
// answers only the session's own approvals), the request id the bridge
// sent, the same capability, and every input the bridge sent, as sent.

// approvalCheckTimeout bounds one read of an approval at the authority.
const approvalCheckTimeout = 5 * time.Second

// maxApprovalBody bounds the authority's answer the bridge reads.
const maxApprovalBody = 64 << 10

// authorityApproval is one approval at the authority, as its session's
// holder reads it.
type authorityApproval struct {
	url, token string
}

// approvalRead is the authority's answer about one approval.
type approvalRead struct {
	Capability string         `json:"capability"`
	RequestID  string         `json:"requestId"`
	Input      map[string]any `json:"input"`
	Status     string         `json:"status"`
}

var errApprovalUnknown = errors.New("the authority knows no such approval of this session")

func (a authorityApproval) read(ctx context.Context) (approvalRead, error) {
	ctx, cancel := context.WithTimeout(ctx, approvalCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err != nil {
		return approvalRead{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return approvalRead{}, errors.New("the authority did not answer")
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxApprovalBody+1))
	switch {
	case err != nil || len(body) > maxApprovalBody:
		return approvalRead{}, errors.New("the authority's answer could not be read")
	case res.StatusCode == http.StatusNotFound, res.StatusCode == http.StatusUnauthorized:
		return approvalRead{}, errApprovalUnknown
	case res.StatusCode != http.StatusOK:
		return approvalRead{}, errors.New("the authority answered " + res.Status)
	}
	var r approvalRead
	if err := json.Unmarshal(body, &r); err != nil {
		return approvalRead{}, errors.New("the authority's answer is malformed")
	}
	return r, nil
}

// callToken is the session token the call's requests carry: the guard's
// for the checked document's origin while browsing, else the client's.
func (b *Bridge) callToken(ctx context.Context) string {
	if b.guard == nil {
		return b.client.Session()
	}
	doc, _, err := b.guard.current(ctx)
	if err != nil {
		return ""
	}
	return tokenFor(b.guard.tokens(doc.Origin), doc.Origin)
}

// tokenSessionID reads the session id (jti) of a pl1 token without
// verifying it: the authority checks the token itself.
func tokenSessionID(tok string) (string, bool) {
	var c struct {
		ID string `json:"jti"`
	}
	if !tokenClaims(tok, &c) || c.ID == "" || strings.TrimLeft(c.ID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" || len(c.ID) > 128 {
		return "", false
	}
	return c.ID, true
}

// approvalOfCall is the approval w names when it is the one for the call
// (capability, the input the bridge sent, as JSON); otherwise why not.
func (b *Bridge) approvalOfCall(ctx context.Context, w agent.Waiting, capability string, sent []byte) (authorityApproval, string) {
	tok := b.callToken(ctx)
	sid, ok := tokenSessionID(tok)
	if !ok {
		return authorityApproval{}, "the call carries no session token the authority could be asked with"
	}
	if _, ok := ApprovalScreenURL(b.screen, w.Approval); !ok {
		return authorityApproval{}, "the approval id is malformed"
	}
	a := authorityApproval{url: b.screen + "/v1/sessions/" + sid + "/approvals/" + w.Approval, token: tok}
	got, err := a.read(ctx)
	if err != nil {
		return authorityApproval{}, err.Error()
	}
	if got.RequestID != w.RequestID || got.Capability != capability {
		return authorityApproval{}, "the approval is for another request of the session"
	}
	var want map[string]any
	if json.Unmarshal(sent, &want) != nil {
		return authorityApproval{}, "the call's input could not be read"
	}
	for k, v := range want {
		if g, ok := got.Input[k]; !ok || !reflect.DeepEqual(g, v) {
			return authorityApproval{}, "the approval is for other input than the call sent"
		}
	}
	return a, ""
}

// inputJSON is the call's input as sent, kept apart from the map the
// invoke goes on with.
func inputJSON(input map[string]any) []byte {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(input); err != nil {
		return nil
	}
	return buf.Bytes()
}
