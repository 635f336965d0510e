package authority

import "testing"

// TestDecidedBeforeWords pins what each decision screen says about a row
// that is no longer pending, so the two columns of the wording table stay
// each screen's own.
func TestDecidedBeforeWords(t *testing.T) {
	cases := []struct {
		screen       int
		status, want string
	}{
		{approvalScreen, StatusApproved, "This action was approved already."},
		{approvalScreen, StatusDenied, "This action was denied."},
		{approvalScreen, StatusExpired, "This approval has expired: the page runs nothing."},
		{approvalScreen, "odd", "This approval is odd."},
		{consentScreen, StatusApproved, "This request was approved already."},
		{consentScreen, StatusDenied, "This request was denied."},
		{consentScreen, StatusExpired, "This request has expired: ask the agent to start again."},
		{consentScreen, StatusPending, "This request is pending."},
	}
	for _, tc := range cases {
		if got := decidedBefore(tc.screen, tc.status); got != tc.want {
			t.Errorf("decidedBefore(%d, %q) = %q, want %q", tc.screen, tc.status, got, tc.want)
		}
	}
}
