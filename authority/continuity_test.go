package authority_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
)

// taskFixture is the continuity tests' own server: the real handler
// (Handler, with /metrics) on loopback over st (nil: a fresh SQLite file
// in t.TempDir()), with a clock the test moves. It does not share the
// delegation tests' fixture so that either can change alone.
type taskFixture struct {
	t     *testing.T
	url   string
	srv   *authority.Server
	clock *atomic.Int64 // unix ms
	store authority.Store
}

func newTaskFixture(t *testing.T, st authority.Store) *taskFixture {
	t.Helper()
	ctx := context.Background()
	if st == nil {
		st = openSQLite(t)
	}
	clock := new(atomic.Int64)
	clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli())
	srv, err := authority.NewServer(ctx, authority.Config{Store: st,
		Audiences: map[string][]string{origin: {"orders.*"}}, OperatorKeys: []string{opKey},
		Now: func() time.Time { return time.UnixMilli(clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &taskFixture{t: t, url: hs.URL, srv: srv, clock: clock, store: st}
}

func (f *taskFixture) advance(d time.Duration) { f.clock.Add(d.Milliseconds()) }

// call is do for the delegation routes: status and body.
func (f *taskFixture) call(method, path, auth string, body any) (int, map[string]any) {
	f.t.Helper()
	r := f.do(method, path, auth, nil, body)
	return r.Status, r.Body
}

// tokenFor returns a session token whose subject (the person the
// operator names on approve) is agent; the agent's own name is "Claude"
// for all of them, as it may well be.
func (f *taskFixture) tokenFor(agent string) string {
	f.t.Helper()
	st, b := f.call("POST", "/v1/delegations", "", map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 3600, "agent": "Claude"})
	if st != 201 {
		f.t.Fatalf("create: %d %v", st, b)
	}
	id, secret := b["id"].(string), b["pollSecret"].(string)
	f.call("POST", "/v1/delegations/"+id+"/approve", opKey, map[string]any{"subject": agent})
	_, b = f.call("POST", "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
	return b["token"].(string)
}

// do sends a continuity request with the headers hdr.
func (f *taskFixture) do(method, path, tok string, hdr map[string]string, body any) resp {
	f.t.Helper()
	return send(f.t, http.DefaultClient, nil, method, f.url+path, tok, hdr, body)
}

func (f *taskFixture) newTask(tok, id string, state any) string {
	f.t.Helper()
	body := map[string]any{"state": state}
	if id != "" {
		body["taskId"] = id
	}
	r := f.do("POST", "/v1/tasks", tok, nil, body)
	if r.Status != 201 {
		f.t.Fatalf("create task: %d %s", r.Status, r.Raw)
	}
	return r.Body["taskId"].(string)
}

func (f *taskFixture) lease(tok, id, holder string) string {
	f.t.Helper()
	r := f.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": holder, "ttlSeconds": 30})
	if r.Status != 200 {
		f.t.Fatalf("lease: %d %s", r.Status, r.Raw)
	}
	return r.Body["leaseId"].(string)
}

func ifMatch(rev int) map[string]string {
	return map[string]string{"If-Match": fmt.Sprintf(`"%d"`, rev)}
}

func TestTaskLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		r := f.do("POST", "/v1/tasks", tok, nil, map[string]any{"taskId": "checkout-1", "state": map[string]any{"step": "start"}})
		if diff := cmp.Diff(map[string]any{"taskId": "checkout-1", "revision": float64(1)}, r.Body); r.Status != 201 || diff != "" {
			t.Fatalf("create: %d (-want +got)\n%s", r.Status, diff)
		}
		lid := f.lease(tok, "checkout-1", "tab-1")
		r = f.do("PUT", "/v1/tasks/checkout-1", tok, ifMatch(1), map[string]any{"leaseId": lid, "state": map[string]any{"step": "cart done"}})
		if r.Status != 200 || r.Body["revision"] != float64(2) {
			t.Fatalf("put: %d %s", r.Status, r.Raw)
		}
		r = f.do("GET", "/v1/tasks/checkout-1", tok, nil, nil)
		if r.Status != 200 || r.Header.Get("ETag") != `"2"` {
			t.Fatalf("get: %d %v %s", r.Status, r.Header, r.Raw)
		}
		if diff := cmp.Diff(map[string]any{"step": "cart done"}, r.Body["state"]); diff != "" {
			t.Errorf("state (-want +got)\n%s", diff)
		}
		if l, _ := r.Body["lease"].(map[string]any); l["holder"] != "tab-1" || l["leaseId"] != nil {
			t.Errorf("lease view %v: want the holder, never the lease id", r.Body["lease"])
		}
		// The same holder acquiring again gets its live lease back (a reload).
		if again := f.lease(tok, "checkout-1", "tab-1"); again != lid {
			t.Errorf("re-acquire by the holder: %s, want %s", again, lid)
		}
		r = f.do("POST", "/v1/tasks/checkout-1/lease/renew", tok, nil, map[string]any{"leaseId": lid})
		if r.Status != 200 || r.Body["leaseId"] != lid {
			t.Fatalf("renew: %d %s", r.Status, r.Raw)
		}
		r = f.do("POST", "/v1/tasks/checkout-1/lease/release", tok, nil, map[string]any{"leaseId": lid})
		if r.Status != 200 || r.Body["status"] != "released" {
			t.Fatalf("release: %d %s", r.Status, r.Raw)
		}
		// Released: another holder may take it at once.
		f.lease(tok, "checkout-1", "tab-2")
	})
}

func TestLeaseExpiryRespectsClockSkew(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		id := f.newTask(tok, "", map[string]any{})
		r := f.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "a", "ttlSeconds": 10})
		lid := r.Body["leaseId"].(string)
		f.advance(10 * time.Second) // lapsed for its holder…
		r = f.do("PUT", "/v1/tasks/"+id, tok, ifMatch(1), map[string]any{"leaseId": lid, "state": map[string]any{}})
		if r.Status != 409 || code(r.Body) != "CONTINUITY_LEASE_EXPIRED" {
			t.Fatalf("write on a lapsed lease: %d %s", r.Status, r.Raw)
		}
		// …but not handed on within the skew margin (2s by default).
		r = f.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "b", "ttlSeconds": 10})
		if r.Status != 423 || code(r.Body) != "CONTINUITY_LEASE_HELD" {
			t.Fatalf("acquire within the skew margin: %d %s", r.Status, r.Raw)
		}
		if ms, _ := r.Body["error"].(map[string]any)["retryAfterMs"].(float64); ms != 2000 {
			t.Errorf("retryAfterMs = %v, want 2000", ms)
		}
		f.advance(2 * time.Second)
		f.lease(tok, id, "b")
		r = f.do("POST", "/v1/tasks/"+id+"/lease/renew", tok, nil, map[string]any{"leaseId": lid})
		if r.Status != 409 || code(r.Body) != "CONTINUITY_LEASE_EXPIRED" {
			t.Fatalf("renew a superseded lease: %d %s", r.Status, r.Raw)
		}
	})
}

func TestContinuityCodes(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok, other := f.tokenFor("agent-1"), f.tokenFor("agent-2")
		revoked := f.tokenFor("agent-3")
		f.newTask(tok, "taken", map[string]any{})
		f.newTask(tok, "held", map[string]any{})
		f.lease(tok, "held", "holder-1")
		f.newTask(tok, "rev", map[string]any{})
		revLease := f.lease(tok, "rev", "w")
		f.newTask(tok, "released", map[string]any{})
		relLease := f.lease(tok, "released", "w")
		f.do("POST", "/v1/tasks/released/lease/release", tok, nil, map[string]any{"leaseId": relLease})
		f.newTask(tok, "revoked", map[string]any{})
		rvkLease := f.lease(tok, "revoked", "w")
		f.do("DELETE", "/v1/tasks/revoked/lease", tok, nil, nil)
		f.newTask(tok, "done", map[string]any{"status": "done"})
		f.newTask(tok, "free", map[string]any{})

		// A revoked session's token is refused.
		var sessionID string
		{
			parts := strings.Split(revoked, ".")
			raw, _ := decodeB64(parts[2])
			var c struct {
				ID string `json:"jti"`
			}
			_ = json.Unmarshal(raw, &c)
			sessionID = c.ID
		}
		if st, b := f.call("POST", "/v1/sessions/"+sessionID+"/revoke", opKey, nil); st != 200 {
			t.Fatalf("revoke session: %d %v", st, b)
		}

		put := func(lease string) map[string]any {
			return map[string]any{"leaseId": lease, "state": map[string]any{"x": 1}}
		}
		cases := []struct {
			name, method, path, tok string
			hdr                     map[string]string
			body                    any
			status                  int
			code                    string
		}{
			{"no token", "GET", "/v1/tasks/taken", "", nil, nil, 401, "CONTINUITY_UNAUTHORIZED"},
			{"garbage token", "GET", "/v1/tasks/taken", "pl1.k.x.y", nil, nil, 401, "CONTINUITY_UNAUTHORIZED"},
			{"operator key is no owner", "GET", "/v1/tasks/taken", opKey, nil, nil, 401, "CONTINUITY_UNAUTHORIZED"},
			{"tampered token", "GET", "/v1/tasks/taken", tamper(tok), nil, nil, 401, "CONTINUITY_UNAUTHORIZED"},
			{"revoked session", "GET", "/v1/tasks/taken", revoked, nil, nil, 401, "CONTINUITY_UNAUTHORIZED"},
			{"task exists", "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": "taken", "state": map[string]any{}}, 409, "CONTINUITY_TASK_EXISTS"},
			{"task exists for another owner", "POST", "/v1/tasks", other, nil, map[string]any{"taskId": "taken", "state": map[string]any{}}, 409, "CONTINUITY_TASK_EXISTS"},
			{"not found", "GET", "/v1/tasks/nope", tok, nil, nil, 404, "CONTINUITY_TASK_NOT_FOUND"},
			{"lease of unknown task", "POST", "/v1/tasks/nope/lease", tok, nil, map[string]any{"holder": "h", "ttlSeconds": 5}, 404, "CONTINUITY_TASK_NOT_FOUND"},
			{"owner mismatch get", "GET", "/v1/tasks/taken", other, nil, nil, 403, "CONTINUITY_OWNER_MISMATCH"},
			{"owner mismatch lease", "POST", "/v1/tasks/free/lease", other, nil, map[string]any{"holder": "h", "ttlSeconds": 5}, 403, "CONTINUITY_OWNER_MISMATCH"},
			{"owner mismatch revoke", "DELETE", "/v1/tasks/held/lease", other, nil, nil, 403, "CONTINUITY_OWNER_MISMATCH"},
			{"lease held", "POST", "/v1/tasks/held/lease", tok, nil, map[string]any{"holder": "holder-2", "ttlSeconds": 5}, 423, "CONTINUITY_LEASE_HELD"},
			{"renew released", "POST", "/v1/tasks/released/lease/renew", tok, nil, map[string]any{"leaseId": relLease}, 409, "CONTINUITY_LEASE_EXPIRED"},
			{"release twice", "POST", "/v1/tasks/released/lease/release", tok, nil, map[string]any{"leaseId": relLease}, 409, "CONTINUITY_LEASE_EXPIRED"},
			{"unknown lease id", "PUT", "/v1/tasks/free", tok, ifMatch(1), put("l-nope"), 409, "CONTINUITY_LEASE_EXPIRED"},
			{"revoke with no lease", "DELETE", "/v1/tasks/free/lease", tok, nil, nil, 409, "CONTINUITY_LEASE_EXPIRED"},
			{"renew revoked", "POST", "/v1/tasks/revoked/lease/renew", tok, nil, map[string]any{"leaseId": rvkLease}, 409, "CONTINUITY_LEASE_REVOKED"},
			{"write with revoked lease", "PUT", "/v1/tasks/revoked", tok, ifMatch(1), put(rvkLease), 409, "CONTINUITY_LEASE_REVOKED"},
			{"stale revision", "PUT", "/v1/tasks/rev", tok, ifMatch(7), put(revLease), 409, "CONTINUITY_REVISION_CONFLICT"},
			{"write to a done task", "PUT", "/v1/tasks/done", tok, ifMatch(1), put("l-any"), 409, "CONTINUITY_INVALID_STATE"},
			{"lease a done task", "POST", "/v1/tasks/done/lease", tok, nil, map[string]any{"holder": "h", "ttlSeconds": 5}, 409, "CONTINUITY_INVALID_STATE"},
			{"missing If-Match", "PUT", "/v1/tasks/rev", tok, nil, put(revLease), 409, "CONTINUITY_INVALID_STATE"},
			{"malformed If-Match", "PUT", "/v1/tasks/rev", tok, map[string]string{"If-Match": "1"}, put(revLease), 409, "CONTINUITY_INVALID_STATE"},
			{"weak If-Match", "PUT", "/v1/tasks/rev", tok, map[string]string{"If-Match": `W/"1"`}, put(revLease), 409, "CONTINUITY_INVALID_STATE"},
			{"If-Match list", "PUT", "/v1/tasks/rev", tok, map[string]string{"If-Match": `"1", "2"`}, put(revLease), 409, "CONTINUITY_INVALID_STATE"},
			{"If-Match star", "PUT", "/v1/tasks/rev", tok, map[string]string{"If-Match": `*`}, put(revLease), 409, "CONTINUITY_INVALID_STATE"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(c.method, c.path, c.tok, c.hdr, c.body)
				if diff := cmp.Diff([2]any{c.status, c.code}, [2]any{r.Status, code(r.Body)}); diff != "" {
					t.Errorf("(-want +got)\n%s\nbody %s", diff, r.Raw)
				}
			})
		}
		// The refused writes changed nothing.
		for id, rev := range map[string]float64{"rev": 1, "revoked": 1, "done": 1, "free": 1, "taken": 1} {
			r := f.do("GET", "/v1/tasks/"+id, tok, nil, nil)
			if r.Body["revision"] != rev {
				t.Errorf("%s: revision %v, want %v", id, r.Body["revision"], rev)
			}
		}
		if r := f.do("GET", "/v1/tasks/held", tok, nil, nil); r.Body["lease"].(map[string]any)["holder"] != "holder-1" {
			t.Errorf("held: lease %v, want holder-1's", r.Body["lease"])
		}
	})
}

func TestContinuityMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		id := f.newTask(tok, "", map[string]any{})
		f.lease(tok, id, "a")
		for range 3 {
			f.do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": "b", "ttlSeconds": 5})
		}
		r := f.do("GET", "/metrics", "", nil, nil)
		if !strings.Contains(string(r.Raw), "pling_authority_lease_held_total 3") {
			t.Errorf("metrics lack three LEASE_HELD answers:\n%s", r.Raw)
		}
	})
}

func TestContinuityStoreUnavailable(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		f.newTask(tok, "t1", map[string]any{})
		f.store.Close()
		for _, c := range []struct{ method, path string }{{"GET", "/v1/tasks/t1"}, {"POST", "/v1/tasks"}} {
			r := f.do(c.method, c.path, tok, nil, map[string]any{"state": map[string]any{}})
			if r.Status != 503 || code(r.Body) != "CONTINUITY_STORAGE_UNAVAILABLE" {
				t.Errorf("%s %s on a closed store: %d %s", c.method, c.path, r.Status, r.Raw)
			}
		}
	})
}

func TestContinuityBadInputChangesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		id := f.newTask(tok, "t1", map[string]any{"step": 1})
		lid := f.lease(tok, id, "w")
		big := `{"leaseId":"` + lid + `","state":{"x":"` + strings.Repeat("a", 80<<10) + `"}}`
		bigState := `{"leaseId":"` + lid + `","state":{"x":"` + strings.Repeat("a", 65<<10) + `"}}`
		cases := []struct {
			name, method, path string
			hdr                map[string]string
			body               any
			status             int
		}{
			{"oversized body", "PUT", "/v1/tasks/t1", ifMatch(1), big, 413},
			{"oversized state", "PUT", "/v1/tasks/t1", ifMatch(1), bigState, 413},
			{"oversized create", "POST", "/v1/tasks", nil, `{"taskId":"t2","state":{"x":"` + strings.Repeat("a", 80<<10) + `"}}`, 413},
			{"unknown field", "PUT", "/v1/tasks/t1", ifMatch(1), map[string]any{"leaseId": lid, "state": map[string]any{}, "extra": 1}, 409},
			{"unknown field on create", "POST", "/v1/tasks", nil, map[string]any{"taskId": "t2", "state": map[string]any{}, "owner": "x"}, 409},
			{"state not an object", "PUT", "/v1/tasks/t1", ifMatch(1), map[string]any{"leaseId": lid, "state": []int{1}}, 409},
			{"state missing", "PUT", "/v1/tasks/t1", ifMatch(1), map[string]any{"leaseId": lid}, 409},
			{"leaseId wrong type", "PUT", "/v1/tasks/t1", ifMatch(1), map[string]any{"leaseId": 7, "state": map[string]any{}}, 409},
			{"trailing data", "PUT", "/v1/tasks/t1", ifMatch(1), `{"leaseId":"` + lid + `","state":{}} {}`, 409},
			{"not JSON", "PUT", "/v1/tasks/t1", ifMatch(1), `leaseId=1`, 409},
			{"missing If-Match", "PUT", "/v1/tasks/t1", nil, map[string]any{"leaseId": lid, "state": map[string]any{}}, 409},
			{"malformed If-Match", "PUT", "/v1/tasks/t1", map[string]string{"If-Match": `"01"`}, map[string]any{"leaseId": lid, "state": map[string]any{}}, 409},
			{"bad task id", "POST", "/v1/tasks", nil, map[string]any{"taskId": "a b", "state": map[string]any{}}, 409},
			{"ttl too long", "POST", "/v1/tasks/t1/lease", nil, map[string]any{"holder": "x", "ttlSeconds": 999999}, 409},
			{"ttl wrong type", "POST", "/v1/tasks/t1/lease", nil, map[string]any{"holder": "x", "ttlSeconds": "5"}, 409},
			{"holder missing", "POST", "/v1/tasks/t1/lease", nil, map[string]any{"ttlSeconds": 5}, 409},
			{"release with a ttl", "POST", "/v1/tasks/t1/lease/release", nil, map[string]any{"leaseId": lid, "ttlSeconds": 5}, 409},
			{"revoke with a body", "DELETE", "/v1/tasks/t1/lease", nil, map[string]any{"leaseId": lid}, 409},
			{"bad idempotency key", "PUT", "/v1/tasks/t1", map[string]string{"If-Match": `"1"`, "Idempotency-Key": "a b"}, map[string]any{"leaseId": lid, "state": map[string]any{}}, 409},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(c.method, c.path, tok, c.hdr, c.body)
				if diff := cmp.Diff([2]any{c.status, "CONTINUITY_INVALID_STATE"}, [2]any{r.Status, code(r.Body)}); diff != "" {
					t.Errorf("(-want +got)\n%s\nbody %.200s", diff, r.Raw)
				}
			})
		}
		r := f.do("GET", "/v1/tasks/t1", tok, nil, nil)
		if diff := cmp.Diff(map[string]any{"step": float64(1)}, r.Body["state"]); r.Body["revision"] != float64(1) || diff != "" {
			t.Errorf("task changed: revision %v, state (-want +got)\n%s", r.Body["revision"], diff)
		}
		if l, _ := r.Body["lease"].(map[string]any); l["holder"] != "w" {
			t.Errorf("lease changed: %v", r.Body["lease"])
		}
		if r := f.do("GET", "/v1/tasks/t2", tok, nil, nil); r.Status != 404 {
			t.Errorf("a refused create made t2: %d", r.Status)
		}
	})
}

func TestIdempotentRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok, other := f.tokenFor("agent-1"), f.tokenFor("agent-2")
		key := map[string]string{"Idempotency-Key": "create-1"}
		first := f.do("POST", "/v1/tasks", tok, key, map[string]any{"state": map[string]any{"n": 1}})
		if first.Status != 201 {
			t.Fatalf("create: %d %s", first.Status, first.Raw)
		}
		again := f.do("POST", "/v1/tasks", tok, key, map[string]any{"state": map[string]any{"n": 1}})
		if again.Status != 201 || !bytes.Equal(first.Raw, again.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: %d %s, want the first answer %s", again.Status, again.Raw, first.Raw)
		}
		id := first.Body["taskId"].(string)
		// The key is per owner: another owner's same key is its own request.
		if r := f.do("POST", "/v1/tasks", other, key, map[string]any{"state": map[string]any{"n": 1}}); r.Status != 201 || r.Body["taskId"] == id {
			t.Errorf("another owner's key: %d %s", r.Status, r.Raw)
		}
		// The same key with another body is refused and does nothing.
		if r := f.do("POST", "/v1/tasks", tok, key, map[string]any{"state": map[string]any{"n": 2}}); r.Status != 409 || code(r.Body) != "CONTINUITY_INVALID_STATE" {
			t.Errorf("same key, other body: %d %s", r.Status, r.Raw)
		}

		lk := map[string]string{"Idempotency-Key": "lease-1"}
		l1 := f.do("POST", "/v1/tasks/"+id+"/lease", tok, lk, map[string]any{"holder": "a", "ttlSeconds": 30})
		l2 := f.do("POST", "/v1/tasks/"+id+"/lease", tok, lk, map[string]any{"holder": "a", "ttlSeconds": 30})
		if l1.Status != 200 || !bytes.Equal(l1.Raw, l2.Raw) {
			t.Fatalf("lease retry: %s vs %s", l1.Raw, l2.Raw)
		}
		lid := l1.Body["leaseId"].(string)
		pk := map[string]string{"Idempotency-Key": "put-1", "If-Match": `"1"`}
		body := map[string]any{"leaseId": lid, "state": map[string]any{"n": 2}}
		p1 := f.do("PUT", "/v1/tasks/"+id, tok, pk, body)
		p2 := f.do("PUT", "/v1/tasks/"+id, tok, pk, body)
		if p1.Status != 200 || !bytes.Equal(p1.Raw, p2.Raw) {
			t.Fatalf("put retry: %d %s vs %d %s", p1.Status, p1.Raw, p2.Status, p2.Raw)
		}
		if r := f.do("GET", "/v1/tasks/"+id, tok, nil, nil); r.Body["revision"] != float64(2) {
			t.Errorf("a retried PUT applied twice: revision %v, want 2", r.Body["revision"])
		}
		// Concurrent retries of one key: one write, one answer.
		var wg sync.WaitGroup
		answers := make([][]byte, 8)
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = f.do("PUT", "/v1/tasks/"+id, tok, map[string]string{"Idempotency-Key": "put-2", "If-Match": `"2"`},
					map[string]any{"leaseId": lid, "state": map[string]any{"n": 3}}).Raw
			}()
		}
		wg.Wait()
		for i := range answers {
			if !bytes.Equal(answers[i], answers[0]) {
				t.Errorf("concurrent retry %d: %s, want %s", i, answers[i], answers[0])
			}
		}
		if r := f.do("GET", "/v1/tasks/"+id, tok, nil, nil); r.Body["revision"] != float64(3) {
			t.Errorf("concurrent retries: revision %v, want 3", r.Body["revision"])
		}
		// A refusal is not remembered: nothing was written, so a retry is a new attempt.
		rk := map[string]string{"Idempotency-Key": "put-3", "If-Match": `"1"`}
		if r := f.do("PUT", "/v1/tasks/"+id, tok, rk, body); code(r.Body) != "CONTINUITY_REVISION_CONFLICT" {
			t.Fatalf("stale put: %s", r.Raw)
		}
		if r := f.do("PUT", "/v1/tasks/"+id, tok, rk, body); code(r.Body) != "CONTINUITY_REVISION_CONFLICT" {
			t.Fatalf("stale put again: %s", r.Raw)
		}
		// Release and revoke replay too: the second release would otherwise
		// be LEASE_EXPIRED.
		rl := map[string]string{"Idempotency-Key": "release-1"}
		r1 := f.do("POST", "/v1/tasks/"+id+"/lease/release", tok, rl, map[string]any{"leaseId": lid})
		r2 := f.do("POST", "/v1/tasks/"+id+"/lease/release", tok, rl, map[string]any{"leaseId": lid})
		if r1.Status != 200 || !bytes.Equal(r1.Raw, r2.Raw) {
			t.Fatalf("release retry: %d %s vs %d %s", r1.Status, r1.Raw, r2.Status, r2.Raw)
		}
		f.lease(tok, id, "b")
		dk := map[string]string{"Idempotency-Key": "revoke-1"}
		d1 := f.do("DELETE", "/v1/tasks/"+id+"/lease", tok, dk, nil)
		d2 := f.do("DELETE", "/v1/tasks/"+id+"/lease", tok, dk, nil)
		if d1.Status != 200 || !bytes.Equal(d1.Raw, d2.Raw) {
			t.Fatalf("revoke retry: %d %s vs %d %s", d1.Status, d1.Raw, d2.Status, d2.Raw)
		}
		// Keys expire (24h by default): after that the key is free again.
		f.advance(25 * time.Hour)
		tok = f.tokenFor("agent-1")
		if r := f.do("POST", "/v1/tasks", tok, key, map[string]any{"state": map[string]any{"n": 1}}); r.Status != 201 || r.Body["taskId"] == id {
			t.Errorf("expired key: %d %s, want a new task", r.Status, r.Raw)
		}
	})
}

func TestLeaseAcquireExactlyOne(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		id := f.newTask(tok, "", map[string]any{})
		won, held := raceForLease(t, 16, func(int) *taskFixture { return f }, tok, id)
		if won != 1 || held != 15 {
			t.Fatalf("%d holders and %d refusals, want 1 and 15", won, held)
		}
	})
}

// raceForLease has n holders ask for the lease of task id at once, the
// i-th through at(i); it counts those that got it and those refused with
// CONTINUITY_LEASE_HELD (any other answer fails the test).
func raceForLease(t *testing.T, n int, at func(i int) *taskFixture, tok, id string) (won, held int32) {
	t.Helper()
	return race(t, n, 423, "CONTINUITY_LEASE_HELD", func(i int) resp {
		return at(i).do("POST", "/v1/tasks/"+id+"/lease", tok, nil, map[string]any{"holder": fmt.Sprintf("h%d", i), "ttlSeconds": 30})
	})
}

// race sends n requests at once, the i-th with send(i), and counts those
// answered 200 and those refused with status and refusal (the code); any
// other answer fails the test.
func race(t *testing.T, n, status int, refusal string, send func(i int) resp) (ok, refused int32) {
	t.Helper()
	var wg sync.WaitGroup
	var o, r atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := send(i)
			switch {
			case res.Status == 200:
				o.Add(1)
			case res.Status == status && code(res.Body) == refusal:
				r.Add(1)
			default:
				t.Errorf("unexpected %d %s", res.Status, res.Raw)
			}
		}()
	}
	wg.Wait()
	return o.Load(), r.Load()
}

func TestConcurrentIfMatchWriters(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		f := newTaskFixture(t, open())
		tok := f.tokenFor("agent-1")
		id := f.newTask(tok, "", map[string]any{"writes": []string{}})
		lid := f.lease(tok, id, "w")
		ok, conflict := race(t, 16, 409, "CONTINUITY_REVISION_CONFLICT", func(i int) resp {
			cur := f.do("GET", "/v1/tasks/"+id, tok, nil, nil)
			var st struct{ Writes []string }
			b, _ := json.Marshal(cur.Body["state"])
			_ = json.Unmarshal(b, &st)
			st.Writes = append(st.Writes, fmt.Sprintf("w%d", i))
			return f.do("PUT", "/v1/tasks/"+id, tok, map[string]string{"If-Match": cur.Header.Get("ETag")},
				map[string]any{"leaseId": lid, "state": map[string]any{"writes": st.Writes}})
		})
		r := f.do("GET", "/v1/tasks/"+id, tok, nil, nil)
		writes := r.Body["state"].(map[string]any)["writes"].([]any)
		if ok+conflict != 16 || ok < 1 {
			t.Fatalf("%d ok + %d conflicts", ok, conflict)
		}
		if r.Body["revision"] != float64(1+ok) || len(writes) != int(ok) {
			t.Fatalf("revision %v with %d writes kept, want %d and %d (a lost update)", r.Body["revision"], len(writes), 1+ok, ok)
		}
	})
}

func decodeB64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(s)
}

// tamper changes one full character of the token's signature (the
// third-last: the last ones carry padding bits, and a fixed suffix could
// equal the real one).
func tamper(tok string) string {
	i := len(tok) - 3
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}
