package authority_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pling-go/pling/authority"
)

// leaseRec is one granted lease as its agent saw it: every time is the
// agent's clock (wall time, no monotonic reading), every expiresAt the
// server's answer.
type leaseRec struct {
	Agent     int
	ID        string
	AcqSent   time.Time // the acquire request left
	AcqGot    time.Time // its 200 answer arrived
	ExpiresMs []int64   // every expiresAt answered for it (the acquire's, each renewal's)
	RelSent   time.Time // the release request left; zero: left to lapse
	RelStatus int       // the release's answer (0: none sent)
}

// knownLive is the interval in which the lease is certainly live, whatever
// the order in which the servers ran things: from its grant's answer (the
// grant committed before) until the release left (it cannot end before
// the holder asks) or the latest expiresAt answered (it lives at least
// that long unless released). Empty when the answer came after that.
func (r leaseRec) knownLive() (start, end time.Time) {
	var exp int64
	for _, e := range r.ExpiresMs {
		exp = max(exp, e)
	}
	start, end = r.AcqGot, time.UnixMilli(exp)
	if !r.RelSent.IsZero() && r.RelSent.Before(end) {
		end = r.RelSent
	}
	return start, end
}

// checkLeaseHistory returns every violation of mutual exclusion in a
// history: two leases whose known-live intervals overlap, or one lease id
// granted twice. Two intervals overlap when, sorted by start, one starts
// before the latest end of those before it.
func checkLeaseHistory(recs []leaseRec) []string {
	type iv struct {
		start, end time.Time
		r          leaseRec
	}
	var ivs []iv
	seen := map[string]int{}
	var bad []string
	for _, r := range recs {
		if a, dup := seen[r.ID]; dup {
			bad = append(bad, fmt.Sprintf("lease %s granted to agent %d and to agent %d", r.ID, a, r.Agent))
		}
		seen[r.ID] = r.Agent
		if s, e := r.knownLive(); s.Before(e) {
			ivs = append(ivs, iv{s, e, r})
		}
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].start.Before(ivs[j].start) })
	var last iv // the interval with the latest end so far
	for i, v := range ivs {
		if i > 0 && v.start.Before(last.end) {
			bad = append(bad, fmt.Sprintf("lease %s (agent %d) known live from %s while lease %s (agent %d) is known live until %s",
				v.r.ID, v.r.Agent, v.start.Format("15:04:05.000000"), last.r.ID, last.r.Agent, last.end.Format("15:04:05.000000")))
		}
		if i == 0 || v.end.After(last.end) {
			last = v
		}
	}
	return bad
}

// storeLease is one row of the store's own record of the leases handed
// out (task_leases): who, when (the granting instance's clock when the
// acquire arrived), for how long, and how it ended (NULL: lapsed or
// current; "released").
type storeLease struct {
	ID, Holder string
	TTLMs      int64
	AcquiredMs int64
	Ended      string
}

// checkStoreLeases checks the store's record against the agents': the
// same leases, to the same holders, released exactly when the agent's
// release was answered 200, and each lease that followed a lapsed one
// acquired, by the store's own clock, no sooner than that one's last
// expiresAt plus the skew margin (the store's rule). The order of grants
// is the agents' (by grant answer), which is the true order for leases
// with a known-live interval; a pair is checked only when no lease whose
// answer came too late to be known live could have been granted between
// them. Released predecessors get no time check: the store records when
// an acquire arrived, not when it committed, and one that arrived before
// the release may rightly commit after it.
func checkStoreLeases(rows []storeLease, recs []leaseRec, holders map[string]string, skewMs int64) (bad []string, pairs int) {
	byID := map[string]storeLease{}
	for _, row := range rows {
		byID[row.ID] = row
	}
	granted := map[string]bool{}
	for _, r := range recs {
		granted[r.ID] = true
	}
	if len(rows) != len(recs) {
		bad = append(bad, fmt.Sprintf("the store records %d leases, the agents were granted %d", len(rows), len(recs)))
	}
	for _, row := range rows {
		if !granted[row.ID] {
			bad = append(bad, fmt.Sprintf("the store handed out lease %s that no agent was granted", row.ID))
		}
	}
	var live, late []leaseRec
	for _, r := range recs {
		row, ok := byID[r.ID]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("lease %s granted to agent %d is not in the store's record", r.ID, r.Agent))
			continue
		case row.Holder != holders[r.ID]:
			bad = append(bad, fmt.Sprintf("lease %s: the store's holder %q, the agent asked as %q", r.ID, row.Holder, holders[r.ID]))
		case (row.Ended == "released") != (r.RelStatus == 200):
			bad = append(bad, fmt.Sprintf("lease %s: the store says ended %q, the agent's release was answered %d", r.ID, row.Ended, r.RelStatus))
		}
		if s, e := r.knownLive(); s.Before(e) {
			live = append(live, r)
		} else {
			late = append(late, r)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].AcqGot.Before(live[j].AcqGot) })
	for i := 1; i < len(live); i++ {
		prev, next := live[i-1], live[i]
		between := false
		for _, x := range late {
			between = between || (x.AcqSent.Before(next.AcqGot) && x.AcqGot.After(prev.AcqSent))
		}
		p, n := byID[prev.ID], byID[next.ID]
		if between || p.Ended == "released" || p.ID == "" || n.ID == "" {
			continue
		}
		pairs++
		exp := p.AcquiredMs + p.TTLMs
		for _, e := range prev.ExpiresMs {
			exp = max(exp, e)
		}
		if n.AcquiredMs < exp+skewMs {
			bad = append(bad, fmt.Sprintf("lease %s acquired at %d while lapsed lease %s lived until %d (+%d ms margin)", n.ID, n.AcquiredMs, p.ID, exp, skewMs))
		}
	}
	return bad, pairs
}

// TestLeaseHistoryChecker: the checker finds overlaps, and only overlaps.
func TestLeaseHistoryChecker(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	exp := func(ms int) []int64 { return []int64{at(ms).UnixMilli()} }
	rec := func(agent int, id string, got int, expires []int64, rel int) leaseRec {
		r := leaseRec{Agent: agent, ID: id, AcqSent: at(got - 1), AcqGot: at(got), ExpiresMs: expires}
		if rel >= 0 {
			r.RelSent, r.RelStatus = at(rel), 200
		}
		return r
	}
	cases := []struct {
		name string
		recs []leaseRec
		bad  int
	}{
		{"released then granted", []leaseRec{rec(1, "a", 0, exp(1000), 50), rec(2, "b", 60, exp(1060), 100)}, 0},
		{"lapsed then granted", []leaseRec{rec(1, "a", 0, exp(1000), -1), rec(2, "b", 1100, exp(2100), 1150)}, 0},
		{"granted while the other is held", []leaseRec{rec(1, "a", 0, exp(1000), 500), rec(2, "b", 400, exp(1400), 450)}, 1},
		{"granted before the other lapsed", []leaseRec{rec(1, "a", 0, exp(1000), -1), rec(2, "b", 900, exp(1900), 950)}, 1},
		{"a renewal keeps it live", []leaseRec{rec(1, "a", 0, append(exp(1000), at(1500).UnixMilli()), -1), rec(2, "b", 1200, exp(2200), 1250)}, 1},
		{"nested in a long one", []leaseRec{rec(1, "a", 0, exp(5000), -1), rec(2, "b", 100, exp(1100), 200), rec(3, "c", 300, exp(1300), 400)}, 2},
		{"answer after expiry proves nothing", []leaseRec{rec(1, "a", 0, exp(1000), 600), rec(2, "b", 1100, exp(1000), -1)}, 0},
		{"one id granted twice", []leaseRec{rec(1, "a", 0, exp(100), 50), rec(2, "a", 200, exp(300), 250)}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkLeaseHistory(c.recs); len(got) != c.bad {
				t.Errorf("%d violations %q, want %d", len(got), got, c.bad)
			}
		})
	}
	t.Run("store record", func(t *testing.T) {
		recs := []leaseRec{rec(1, "a", 0, exp(1000), 50), rec(2, "b", 60, exp(1060), -1), rec(3, "c", 1200, exp(2200), 1250)}
		holders := map[string]string{"a": "h1", "b": "h2", "c": "h3"}
		row := func(id, h string, acq int, ended string) storeLease {
			return storeLease{ID: id, Holder: h, TTLMs: 1000, AcquiredMs: at(acq).UnixMilli(), Ended: ended}
		}
		good := []storeLease{row("a", "h1", 0, "released"), row("b", "h2", 55, ""), row("c", "h3", 1190, "released")}
		if bad, pairs := checkStoreLeases(good, recs, holders, 100); len(bad) != 0 || pairs != 1 {
			t.Errorf("a sound record: %q, %d pairs checked, want 1", bad, pairs)
		}
		for _, c := range []struct {
			name string
			rows []storeLease
			bad  int
		}{
			{"inside the margin", []storeLease{row("a", "h1", 0, "released"), row("b", "h2", 55, ""), row("c", "h3", 1100, "released")}, 1},
			{"another holder", []storeLease{row("a", "h1", 0, "released"), row("b", "hx", 55, ""), row("c", "h3", 1190, "released")}, 1},
			{"released in the store only", []storeLease{row("a", "h1", 0, "released"), row("b", "h2", 55, "released"), row("c", "h3", 1190, "released")}, 1},
			{"a lease no agent got", append(good, row("d", "h4", 3000, "")), 2},
			{"a grant the store lost", good[:2], 2},
		} {
			if bad, _ := checkStoreLeases(c.rows, recs, holders, 100); len(bad) != c.bad {
				t.Errorf("%s: %q, want %d violations", c.name, bad, c.bad)
			}
		}
	})
}

// contendUntil runs agents that loop acquire → hold (renewing some) →
// release (leaving some to lapse) on one task through the instances at
// urls, each call through another instance than the last, for d, and on
// past d up to limit until at least minGrants leases were granted and one
// lapsed (so that a loaded machine still sees contention); it returns the
// granted leases, the holder each asked as, and the count of refused
// acquires.
func contendUntil(t *testing.T, cl *http.Client, urls []string, tok, task string, agents int, d, limit time.Duration, minGrants int) ([]leaseRec, map[string]string, int) {
	t.Helper()
	var mu sync.Mutex
	var recs []leaseRec
	holders := map[string]string{}
	refused := 0
	now := func() time.Time { return time.Now().Round(0) }
	t0 := time.Now()
	var grants, lapses atomic.Int64
	going := func() bool {
		el := time.Since(t0)
		return el < d || (el < limit && (grants.Load() < int64(minGrants) || lapses.Load() == 0))
	}
	ctx := context.Background()
	path := "/v1/tasks/" + task + "/lease"
	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(a), 13))
			inst := func(k int) string { return urls[(a+k)%len(urls)] }
			for cycle := 0; going(); cycle++ {
				holder := fmt.Sprintf("agent-%d-%d", a, cycle)
				sent := now()
				r, err := hcall(ctx, cl, inst(cycle), "POST", path, tok, nil, map[string]any{"holder": holder, "ttlSeconds": 1})
				got := now()
				if err != nil {
					t.Errorf("agent %d: acquire: %v", a, err)
					return
				}
				if r.status == 423 && code(r.body) == "CONTINUITY_LEASE_HELD" {
					mu.Lock()
					refused++
					mu.Unlock()
					time.Sleep(time.Duration(5+rng.IntN(35)) * time.Millisecond)
					continue
				}
				if r.status != 200 {
					t.Errorf("agent %d: acquire: %d %s", a, r.status, r.raw)
					return
				}
				rec := leaseRec{Agent: a, ID: r.body["leaseId"].(string), AcqSent: sent, AcqGot: got}
				exp, err := time.Parse(time.RFC3339Nano, r.body["expiresAt"].(string))
				if err != nil {
					t.Errorf("agent %d: expiresAt: %v", a, err)
					return
				}
				rec.ExpiresMs = append(rec.ExpiresMs, exp.UnixMilli())
				grants.Add(1)
				time.Sleep(time.Duration(2+rng.IntN(15)) * time.Millisecond)
				p := rng.IntN(100)
				if p < 30 { // renew through the next instance
					rr, err := hcall(ctx, cl, inst(cycle+1), "POST", path+"/renew", tok, nil, map[string]any{"leaseId": rec.ID})
					switch {
					case err != nil:
						t.Errorf("agent %d: renew: %v", a, err)
					case rr.status == 200:
						exp, _ := time.Parse(time.RFC3339Nano, rr.body["expiresAt"].(string))
						rec.ExpiresMs = append(rec.ExpiresMs, exp.UnixMilli())
						time.Sleep(time.Duration(2+rng.IntN(10)) * time.Millisecond)
					case code(rr.body) != "CONTINUITY_LEASE_EXPIRED": // a slow machine may let it lapse
						t.Errorf("agent %d: renew: %d %s", a, rr.status, rr.raw)
					}
				}
				if p >= 97 || (a == 0 && lapses.Load() == 0) { // leave it to lapse (agent 0 its first)
					lapses.Add(1)
					mu.Lock()
					recs, holders[rec.ID] = append(recs, rec), holder
					mu.Unlock()
					continue
				}
				rec.RelSent = now()
				rr, err := hcall(ctx, cl, inst(cycle+2), "POST", path+"/release", tok, nil, map[string]any{"leaseId": rec.ID})
				if err != nil {
					t.Errorf("agent %d: release: %v", a, err)
					return
				}
				rec.RelStatus = rr.status
				if rr.status != 200 {
					lapses.Add(1)
				}
				if rr.status != 200 && code(rr.body) != "CONTINUITY_LEASE_EXPIRED" {
					t.Errorf("agent %d: release: %d %s", a, rr.status, rr.raw)
				}
				mu.Lock()
				recs, holders[rec.ID] = append(recs, rec), holder
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return recs, holders, refused
}

// readStoreLeases reads the store's record of the task's leases.
func readStoreLeases(t *testing.T, driver, dsn, task string) []storeLease {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// task is a test-made id of [A-Za-z0-9._-]: no placeholder needed
	// (the two drivers spell them differently).
	rows, err := db.Query(`SELECT lease_id, holder, ttl_ms, acquired_ms, COALESCE(ended, '') FROM task_leases WHERE task_id = '` + task + `'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storeLease
	for rows.Next() {
		var l storeLease
		if err := rows.Scan(&l.ID, &l.Holder, &l.TTLMs, &l.AcquiredMs, &l.Ended); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// leaseProof runs the contention for d (longer, up to limit, until 20
// grants and a lapse were seen) and both checks.
func leaseProof(t *testing.T, urls []string, driver, dsn string, agents int, d, limit time.Duration) {
	cl := newClient(t, agents)
	tok, _ := grant(t, cl, urls)
	task := "contended"
	mustCall(t, cl, urls[0], "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": task, "state": map[string]any{}}, 201)
	recs, holders, refused := contendUntil(t, cl, urls, tok, task, agents, d, limit, 20)
	lapsed, renewed := 0, 0
	for _, r := range recs {
		if r.RelSent.IsZero() || r.RelStatus != 200 {
			lapsed++
		}
		if len(r.ExpiresMs) > 1 {
			renewed++
		}
	}
	t.Logf("%d agents, %d instances, at least %v: %d leases granted (%d renewed, %d lapsed), %d acquires refused",
		agents, len(urls), d, len(recs), renewed, lapsed, refused)
	if len(recs) < 20 || lapsed == 0 || refused == 0 {
		t.Errorf("too little contention to prove anything: %d grants, %d lapsed, %d refused", len(recs), lapsed, refused)
	}
	if bad := checkLeaseHistory(recs); len(bad) != 0 {
		t.Errorf("%d violations of mutual exclusion in the agents' history:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
	rows := readStoreLeases(t, driver, dsn, task)
	bad, pairs := checkStoreLeases(rows, recs, holders, leaseSkew.Milliseconds())
	if len(bad) != 0 {
		t.Errorf("%d violations in the store's record:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
	t.Logf("the store's record: %d leases, %d hand-overs after a lapse checked against its clock", len(rows), pairs)
}

// leaseSkew is the instances' MaxClockSkew in the contention proofs: they
// share the host's clock, so a small margin lets lapsed leases pass on
// within the test's time.
const leaseSkew = 100 * time.Millisecond

func withSkew(c *authority.Config) { c.MaxClockSkew = leaseSkew }

// TestLeaseContentionThreeInstances: 64 agents contend for one task's
// lease through three instances on one PostgreSQL for 20 s, with 1 s
// leases some of which lapse; at no instant are two leases live, by the
// agents' history and by the store's record.
func TestLeaseContentionThreeInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s of contention; -short skips it")
	}
	c := newCluster(t, 3, withSkew)
	leaseProof(t, c.urls(), "pgx", c.DSN, 64, 20*time.Second, 40*time.Second)
}

// TestLeaseContentionSQLite: the same proof on three instances over one
// SQLite file (one process, separate store handles), shorter.
func TestLeaseContentionSQLite(t *testing.T) {
	urls, path := sqliteInstances(t, 3, withSkew)
	leaseProof(t, urls, "sqlite", "file:"+path, 16, 3*time.Second, 20*time.Second)
}
