package authority_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pling-go/pling/runtime"
)

// TestSubjectIsThePerson (spec §9.1): approve names
// the person who consented and is refused without one; the token's sub is
// that person, never the agent's self-chosen name; so two people's agents
// both named "Claude" own their tasks apart: neither reads nor leases the
// other's. Were the subject the agent's name, both tokens would say
// sub "Claude" and Mallory would read Alice's task (200).
func TestSubjectIsThePerson(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		st, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 60, "agent": "Claude"})
		if st != 201 {
			t.Fatalf("create: %d %v", st, b)
		}
		id := b["id"].(string)
		for _, body := range []any{nil, map[string]any{}, map[string]any{"subject": ""}, map[string]any{"subject": "a\u0001b"}} {
			if st, b := f.call("POST", "/v1/delegations/"+id+"/approve", opKey, body); st != 400 || code(b) != "DELEGATION_REQUEST_INVALID" {
				t.Errorf("approve with body %v: %d %v, want 400 DELEGATION_REQUEST_INVALID", body, st, b)
			}
		}
		alice, mallory := f.tokenFor("alice"), f.tokenFor("mallory")
		for tok, want := range map[string]string{alice: "alice", mallory: "mallory"} {
			if got := tokenSubject(t, tok); got != want {
				t.Errorf("token sub = %q, want %q (the person, not the agent's name)", got, want)
			}
		}
		task := f.newTask(alice, "card", map[string]any{"card": "4111 1111 1111 1111"})
		if r := f.do("GET", "/v1/tasks/"+task, mallory, nil, nil); r.Status != 403 || code(r.Body) != "CONTINUITY_OWNER_MISMATCH" {
			t.Errorf("mallory reads alice's task: %d %s, want 403 CONTINUITY_OWNER_MISMATCH", r.Status, r.Raw)
		}
		if r := f.do("POST", "/v1/tasks/"+task+"/lease", mallory, nil, map[string]any{"holder": "m", "ttlSeconds": 30}); r.Status == 200 {
			t.Errorf("mallory leased alice's task: %d %s", r.Status, r.Raw)
		}
		if r := f.do("GET", "/v1/tasks/"+task, alice, nil, nil); r.Status != 200 {
			t.Errorf("alice reads her task: %d %s", r.Status, r.Raw)
		}
	})
}

func tokenSubject(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 4 {
		t.Fatalf("not a pl1 token")
	}
	var c runtime.Claims
	raw, err := decodeB64(parts[2])
	if err != nil || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("token payload: %v", err)
	}
	return c.Subject
}

// TestClientTextRefused: every client string that
// can reach the store — agent, subject, lease holder, lease id, task id,
// path segments, query values, Idempotency-Key — with invalid UTF-8 or a
// NUL (or, in names, another control character) is refused with 400,
// the same on SQLite and PostgreSQL, before a store sees it. Left to the
// stores, agent "a\x00b" would be 201 on SQLite and 500 on PostgreSQL,
// holder "h\x00" 200 on SQLite and 503 on PostgreSQL, agent "\xff" 201
// on both.
func TestClientTextRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("alice")
		task := f.newTask(tok, "t1", map[string]any{})
		lease := f.lease(tok, task, "h")
		create := func(agent string) string {
			return `{"audience":"` + origin + `","scope":["orders.read"],"ttlSeconds":60,"agent":"` + agent + `"}`
		}
		st, b := f.call("POST", "/v1/delegations", "", create("a"))
		if st != 201 {
			t.Fatal(b)
		}
		pending := b["id"].(string)
		for _, tc := range []struct {
			name, method, path, auth, body string
			hdr                            map[string]string
			code                           string
		}{
			{name: "agent NUL", method: "POST", path: "/v1/delegations", body: create(`a\u0000b`), code: "DELEGATION_REQUEST_INVALID"},
			{name: "agent invalid UTF-8", method: "POST", path: "/v1/delegations", body: create("a\xffb"), code: "DELEGATION_REQUEST_INVALID"},
			{name: "agent control", method: "POST", path: "/v1/delegations", body: create(`a\u001bb`), code: "DELEGATION_REQUEST_INVALID"},
			{name: "agent C1 control", method: "POST", path: "/v1/delegations", body: create(`a\u0085b`), code: "DELEGATION_REQUEST_INVALID"},
			{name: "subject NUL", method: "POST", path: "/v1/delegations/" + pending + "/approve", auth: opKey, body: `{"subject":"al\u0000ice"}`, code: "DELEGATION_REQUEST_INVALID"},
			{name: "subject invalid UTF-8", method: "POST", path: "/v1/delegations/" + pending + "/approve", auth: opKey, body: "{\"subject\":\"al\xc3ice\"}", code: "DELEGATION_REQUEST_INVALID"},
			{name: "poll secret NUL", method: "POST", path: "/v1/delegations/" + pending + "/token", body: `{"pollSecret":"\u0000"}`, code: "DELEGATION_REQUEST_INVALID"},
			{name: "delegation id in path", method: "GET", path: "/v1/delegations/%FF", auth: opKey, code: "DELEGATION_REQUEST_INVALID"},
			{name: "delegation id NUL in path", method: "GET", path: "/v1/delegations/a%00", auth: opKey, code: "DELEGATION_REQUEST_INVALID"},
			{name: "user code query", method: "GET", path: "/v1/delegations?userCode=%FF%00", auth: opKey, code: "DELEGATION_REQUEST_INVALID"},
			{name: "session id in revoke path", method: "POST", path: "/v1/sessions/s%00/revoke", auth: opKey, code: "DELEGATION_REQUEST_INVALID"},
			{name: "holder NUL", method: "POST", path: "/v1/tasks/" + task + "/lease", auth: tok, body: `{"holder":"h\u0000","ttlSeconds":30}`, code: "CONTINUITY_INVALID_STATE"},
			{name: "holder invalid UTF-8", method: "POST", path: "/v1/tasks/" + task + "/lease", auth: tok, body: "{\"holder\":\"h\xff\",\"ttlSeconds\":30}", code: "CONTINUITY_INVALID_STATE"},
			{name: "holder newline", method: "POST", path: "/v1/tasks/" + task + "/lease", auth: tok, body: `{"holder":"h\n","ttlSeconds":30}`, code: "CONTINUITY_INVALID_STATE"},
			{name: "lease id NUL", method: "POST", path: "/v1/tasks/" + task + "/lease/renew", auth: tok, body: `{"leaseId":"` + lease + `\u0000","ttlSeconds":30}`, code: "CONTINUITY_INVALID_STATE"},
			{name: "state NUL", method: "PUT", path: "/v1/tasks/" + task, auth: tok, hdr: map[string]string{"If-Match": `"1"`}, body: `{"leaseId":"` + lease + `","state":{"a":"\u0000"}}`, code: "CONTINUITY_INVALID_STATE"},
			{name: "state invalid UTF-8", method: "PUT", path: "/v1/tasks/" + task, auth: tok, hdr: map[string]string{"If-Match": `"1"`}, body: "{\"leaseId\":\"" + lease + "\",\"state\":{\"a\":\"\xfe\"}}", code: "CONTINUITY_INVALID_STATE"},
			{name: "task id in path", method: "GET", path: "/v1/tasks/%FF", auth: tok, code: "CONTINUITY_INVALID_STATE"},
			{name: "task id NUL in path", method: "GET", path: "/v1/tasks/t%00", auth: tok, code: "CONTINUITY_INVALID_STATE"},
			{name: "idempotency key", method: "POST", path: "/v1/tasks", auth: tok, hdr: map[string]string{"Idempotency-Key": "k\xff"}, body: `{"state":{}}`, code: "CONTINUITY_INVALID_STATE"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body any
				if tc.body != "" {
					body = tc.body
				}
				r := f.do(tc.method, tc.path, tc.auth, tc.hdr, body)
				if r.Status != 400 || code(r.Body) != tc.code {
					t.Errorf("%d %s, want 400 %s", r.Status, r.Raw, tc.code)
				}
			})
		}
		// Text that is only unusual stays accepted.
		if st, b := f.call("POST", "/v1/delegations", "", create("Claude – ünïcode ✓")); st != 201 {
			t.Errorf("agent with non-ASCII text: %d %v", st, b)
		}
		if r := f.do("PUT", "/v1/tasks/"+task, tok, map[string]string{"If-Match": `"1"`}, `{"leaseId":"`+lease+`","state":{"note":"line 1\nline 2 ✓"}}`); r.Status != 200 {
			t.Errorf("state with a newline: %d %s", r.Status, r.Raw)
		}
	})
}
