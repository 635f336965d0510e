//go:build !js

package follow

import "net/http"

// CheckRequest is CheckCall with the session token and the approval read
// from r's headers (SessionHeader, ApprovalHeader), as a page's handler
// sends them (fetch(url, {headers: call.headers, …})).
func (f *Follower) CheckRequest(r *http.Request, c Call) (Caller, error) {
	return f.CheckCall(r.Context(), r.Header.Get(SessionHeader), r.Header.Get(ApprovalHeader), c)
}
