package mcp_test

import (
	"testing"

	"github.com/pling-go/pling/agent/mcp"
)

// TestApprovalScreenURL: the screen's address is the authority the agent
// knows and the page's id, which cannot leave the id's query value: no
// path, host, query or fragment of the page's making reaches the host.
func TestApprovalScreenURL(t *testing.T) {
	for _, tc := range []struct {
		name, authority, id, want string
	}{
		{"plain", "http://127.0.0.1:8090", "JnOtpEbTV4aHuWEKBj_lpw", "http://127.0.0.1:8090/approve?id=JnOtpEbTV4aHuWEKBj_lpw"},
		{"trailing slash and path", "https://auth.example/pling/", "a-b_c", "https://auth.example/pling/approve?id=a-b_c"},
		{"id with a host", "https://auth.example", "x@evil.example", ""},
		{"id with a path", "https://auth.example", "../consent", ""},
		{"id with a query", "https://auth.example", "x&decision=approve", ""},
		{"id with a fragment", "https://auth.example", "x#y", ""},
		{"empty id", "https://auth.example", "", ""},
		{"long id", "https://auth.example", string(make([]byte, 65)), ""},
		{"authority with credentials", "https://u:p@auth.example", "x", ""},
		{"authority with a query", "https://auth.example/?a=b", "x", ""},
		{"authority not http", "javascript:alert(1)", "x", ""},
		{"authority without host", "https:///x", "x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := mcp.ApprovalScreenURL(tc.authority, tc.id)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("ApprovalScreenURL(%q, %q) = %q, %v; want %q", tc.authority, tc.id, got, ok, tc.want)
			}
		})
	}
}
