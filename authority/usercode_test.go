package authority_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// GET /v1/delegations?userCode= is how a consent screen finds the
// delegation a person was sent to: an operator route, like GET by id.
func TestDelegationByUserCode(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		_, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.*"}, "ttlSeconds": 600, "agent": "agent-1"})
		id, userCode := b["id"].(string), b["userCode"].(string)
		type answer struct {
			Status      int
			ID, Code, S string
		}
		get := func(auth, uc string) answer {
			st, b := f.call("GET", "/v1/delegations?userCode="+url.QueryEscape(uc), auth, nil)
			a := answer{Status: st, Code: code(b)}
			a.ID, _ = b["id"].(string)
			a.S, _ = b["status"].(string)
			return a
		}
		tests := []struct {
			name, auth, code string
			advance          time.Duration
			want             answer
		}{
			{"found", opKey, userCode, 0, answer{Status: 200, ID: id, S: "pending"}},
			{"no operator key", "", userCode, 0, answer{Status: 401, Code: "DELEGATION_CREDENTIAL_INVALID"}},
			{"wrong operator key", "nope", userCode, 0, answer{Status: 401, Code: "DELEGATION_CREDENTIAL_INVALID"}},
			{"unknown code", opKey, "BBBB-BBBB", 0, answer{Status: 404, Code: "DELEGATION_NOT_FOUND"}},
			{"no code", opKey, "", 0, answer{Status: 400, Code: "DELEGATION_REQUEST_INVALID"}},
			{"expired", opKey, userCode, 11 * time.Minute, answer{Status: 200, ID: id, S: "expired"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f.advance(tt.advance)
				if diff := cmp.Diff(tt.want, get(tt.auth, tt.code)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
}
