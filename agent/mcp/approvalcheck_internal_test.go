package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/runtime"
)

// TestApprovalOfCall: the bridge opens an approval the page names only
// when the authority, asked with the call's own session token, says it is
// for the request id, capability and input the call sent; every other
// approval, and an authority that cannot say, is refused with a reason.
func TestApprovalOfCall(t *testing.T) {
	const site = "https://shop.example"
	a := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{site: {"*"}}, OperatorKeys: []string{"op-key"}}, nil)
	mine := a.DeviceGrant(t, authoritytest.Grant{Audience: site, Scope: []string{"*"}})
	other := a.DeviceGrant(t, authoritytest.Grant{Audience: site, Scope: []string{"*"}})
	approval := func(s authoritytest.Session, capability, requestID string, input map[string]any) string {
		t.Helper()
		exp := time.Now().Add(5 * time.Minute).UnixMilli()
		code, out := authoritytest.Call(t, a.URL, http.MethodPost, "/v1/approvals", s.Token, map[string]any{"sessionId": s.SID, "audience": site,
			"request":   runtime.ApprovalRequest{Capability: capability, Input: input, Session: "sha256:" + strings.Repeat("a", 64), RequestID: requestID, ExpiresAtMs: exp},
			"challenge": map[string]any{"binding": "sha256:" + strings.Repeat("0", 64), "capability": capability, "title": "Refund", "expiresAtMs": exp}})
		if code != http.StatusCreated {
			t.Fatalf("approval: %d %v", code, out)
		}
		return out["id"].(string)
	}
	// What the call sent; the page adds its defaults before it asks.
	sent := inputJSON(map[string]any{"record": "ord_7", "reason": "damaged"})
	withDefaults := map[string]any{"record": "ord_7", "reason": "damaged", "notify": true}
	ids := map[string]string{
		"the call's":         approval(mine, "refund@order", "mcp-1", withDefaults),
		"another request":    approval(mine, "refund@order", "mcp-2", withDefaults),
		"another capability": approval(mine, "void@order", "mcp-1", withDefaults),
		"other input":        approval(mine, "refund@order", "mcp-1", map[string]any{"record": "ord_8", "reason": "damaged"}),
		"missing input":      approval(mine, "refund@order", "mcp-1", map[string]any{"record": "ord_7"}),
		"another session's":  approval(other, "refund@order", "mcp-1", withDefaults),
	}
	for _, tc := range []struct {
		name, approval, authority, token, why string
	}{
		{name: "the call's", approval: ids["the call's"], token: mine.Token},
		{name: "another request", approval: ids["another request"], token: mine.Token, why: "another request"},
		{name: "another capability", approval: ids["another capability"], token: mine.Token, why: "another request"},
		{name: "other input", approval: ids["other input"], token: mine.Token, why: "other input"},
		{name: "missing input", approval: ids["missing input"], token: mine.Token, why: "other input"},
		{name: "another session's", approval: ids["another session's"], token: mine.Token, why: "no such approval"},
		{name: "no such approval", approval: "nosuchapproval", token: mine.Token, why: "no such approval"},
		{name: "no session token", approval: ids["the call's"], why: "no session token"},
		{name: "a malformed id", approval: "../keys", token: mine.Token, why: "malformed"},
		{name: "the authority does not answer", approval: ids["the call's"], authority: "http://127.0.0.1:1", token: mine.Token, why: "did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			screen := a.URL
			if tc.authority != "" {
				screen = tc.authority
			}
			b := NewBridge(agent.New(nil, agent.WithSession(tc.token)), WithApprovalScreen(screen))
			_, why := b.approvalOfCall(context.Background(), agent.Waiting{RequestID: "mcp-1", Approval: tc.approval}, "refund@order", sent)
			if (why == "") != (tc.why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("why %q, want one with %q", why, tc.why)
			}
		})
	}
}
