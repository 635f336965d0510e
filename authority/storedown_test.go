package authority_test

import "testing"

// TestDelegationStoreDown: a store that cannot answer is 500
// DELEGATION_INTERNAL on every delegation route (never a guess, never a
// success). (/readyz: TestReadyzFollowsPostgres.)
func TestDelegationStoreDown(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newFixture(t, open())
		id, secret := f.create("orders.read")
		f.store.Close()
		for _, c := range []struct {
			name, method, path, auth string
			body                     any
		}{
			{"create", "POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 600, "agent": "a"}},
			{"get", "GET", "/v1/delegations/" + id, opKey, nil},
			{"approve", "POST", "/v1/delegations/" + id + "/approve", opKey, map[string]any{"subject": "alice"}},
			{"token", "POST", "/v1/delegations/" + id + "/token", "", map[string]any{"pollSecret": secret}},
			{"revoke", "POST", "/v1/sessions/s-none/revoke", opKey, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				st, b := f.call(c.method, c.path, c.auth, c.body)
				if st != 500 || code(b) != "DELEGATION_INTERNAL" {
					t.Errorf("%s %s on a closed store: %d %v, want 500 DELEGATION_INTERNAL", c.method, c.path, st, b)
				}
			})
		}
	})
}
