package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", to fill the PostgreSQL store
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/httpserver"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// The production figures of the authority: client writes while
// the background sweeper deletes a million expired rows, against an empty
// store, and the sweep's rows per second; the delegation create limit's
// accuracy with 1 and 3 instances sharing the store.

type baSweep struct {
	Store         string  `json:"store"`
	Rows          int     `json:"rows"`
	EmptyP99Ms    float64 `json:"emptyP99Ms"`
	SweepingP99Ms float64 `json:"sweepingP99Ms"`
	// P99Ratio is SweepingP99Ms ÷ EmptyP99Ms (target ≤ 1.5).
	P99Ratio      float64 `json:"p99Ratio"`
	SweepRowsPerS float64 `json:"sweepRowsPerSec"`
	SweepSeconds  float64 `json:"sweepSeconds"`
}

type baLimit struct {
	Store     string `json:"store"`
	Instances int    `json:"instances"`
	Sent      int    `json:"sent"`
	Allowed   int    `json:"allowed"`
	// Limit is burst + rate × elapsed; Accuracy is Allowed ÷ Limit (target ≤ 1.1).
	Limit    float64 `json:"limit"`
	Accuracy float64 `json:"accuracy"`
}

type baOps struct {
	Sweep  []baSweep `json:"sweep"`
	Limits []baLimit `json:"rateLimit"`
}

// opsInstance is one instance of the ops figures, its server kept.
type opsInstance struct {
	url  string
	srv  *authority.Server
	stop func()
}

func opsInstances(ctx context.Context, spec string, n int, mod func(*authority.Config)) ([]opsInstance, func(), error) {
	var out []opsInstance
	stop := func() {
		for i := len(out) - 1; i >= 0; i-- {
			out[i].stop()
		}
	}
	for range n {
		st, err := authority.Open(ctx, authority.StoreSpec(spec))
		if err != nil {
			stop()
			return nil, nil, err
		}
		cfg := authority.Config{Store: st, Audiences: map[string][]string{benchOrigin: {"orders.*"}}, OperatorKeys: []string{benchOpKey}}
		if mod != nil {
			mod(&cfg)
		}
		srv, err := authority.NewServer(ctx, cfg)
		if err != nil {
			st.Close()
			stop()
			return nil, nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			st.Close()
			stop()
			return nil, nil, err
		}
		hs := httpserver.Authority(srv.Handler())
		go hs.Serve(ln)
		out = append(out, opsInstance{url: "http://" + ln.Addr().String(), srv: srv, stop: func() {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			hs.Shutdown(c)
			st.Close()
		}})
	}
	return out, stop, nil
}

// fillExpired inserts rows expired idempotency records into the store at
// spec, in one statement.
func fillExpired(ctx context.Context, spec string, rows int) error {
	var db *sql.DB
	var err error
	var q string
	if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		db, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		q = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
			INSERT INTO idempotency_keys (owner, idem_key, digest, status, body, created_ms, expires_ms)
			SELECT 'bench', 'k' || x, x'00', 201, '{}', 1, 2 FROM c`
	} else {
		db, err = sql.Open("pgx", spec)
		q = `INSERT INTO idempotency_keys (owner, idem_key, digest, status, body, created_ms, expires_ms)
			SELECT 'bench', 'k' || x, '\x00'::bytea, 201, '{}', 1, 2 FROM generate_series(1, $1) AS x`
	}
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, q, rows)
	return err
}

// opsWrites runs clients writing their own tasks under their own leases
// on the instances for d and returns the p99 (ms) of the writes.
func opsWrites(urls []string, clients int, d time.Duration) (float64, error) {
	c, err := benchCellOn(urls, "write", clients, d)
	return c.P99Ms, err
}

// benchCellOn is benchCell's measurement on running instances.
func benchCellOn(urls []string, op string, clients int, d time.Duration) (baCell, error) {
	saved := benchStartHook
	benchStartHook = func(context.Context, string, int) ([]string, func(), error) { return urls, func() {}, nil }
	defer func() { benchStartHook = saved }()
	return benchCell(context.Background(), "", len(urls), op, clients, d)
}

func benchSweep(ctx context.Context, store, emptySpec, fullSpec string, rows, clients int, d time.Duration, progress func(string, ...any)) (baSweep, error) {
	r := baSweep{Store: store, Rows: rows}
	insts, stop, err := opsInstances(ctx, emptySpec, 1, nil)
	if err != nil {
		return r, err
	}
	if r.EmptyP99Ms, err = opsWrites([]string{insts[0].url}, clients, d); err != nil {
		stop()
		return r, err
	}
	stop()
	// The full store: migrate it (open), fill it, then write while it sweeps.
	insts, stop, err = opsInstances(ctx, fullSpec, 1, func(c *authority.Config) {
		c.Retention.SweepTimeout = 10 * time.Minute
	})
	if err != nil {
		return r, err
	}
	defer stop()
	progress("%s: filling %d expired rows", store, rows)
	if err := fillExpired(ctx, fullSpec, rows); err != nil {
		return r, err
	}
	var wg sync.WaitGroup
	var res authority.SweepResult
	var serr error
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, serr = insts[0].srv.SweepOnce(ctx)
		r.SweepSeconds = time.Since(start).Seconds()
	}()
	p99, err := opsWrites([]string{insts[0].url}, clients, d)
	wg.Wait()
	if err != nil {
		return r, err
	}
	if serr != nil {
		return r, serr
	}
	if r.SweepSeconds < d.Seconds() {
		progress("%s: the sweep (%.1f s) ended before the writes (%v): the p99 is partly without it", store, r.SweepSeconds, d)
	}
	r.SweepingP99Ms = p99
	r.P99Ratio = baRatio(r.SweepingP99Ms, r.EmptyP99Ms)
	r.SweepRowsPerS = float64(res.Rows["idempotency_keys"]) / r.SweepSeconds
	return r, nil
}

// benchLimit sends POST /v1/delegations from one address round-robin over
// n instances for d and compares what passed with the limit.
func benchLimit(ctx context.Context, store, spec string, n int, d time.Duration) (baLimit, error) {
	const burst, perSec = 30, 0.5
	r := baLimit{Store: store, Instances: n}
	insts, stop, err := opsInstances(ctx, spec, n, func(c *authority.Config) {
		c.CreateBurst, c.CreatePerSecond = burst, perSec
		c.Retention.MaxPendingPerAudience = -1
	})
	if err != nil {
		return r, err
	}
	defer stop()
	cl := newBenchClient(16)
	defer cl.CloseIdleConnections()
	var mu sync.Mutex
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(deadline); i += 8 {
				st, _, err := baCall(cl, insts[i%n].url, "POST", "/v1/delegations", "", nil,
					map[string]any{"audience": benchOrigin, "scope": []string{"orders.read"}, "ttlSeconds": 600, "agent": "bench"})
				mu.Lock()
				r.Sent++
				if err == nil && st == 201 {
					r.Allowed++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.Limit = burst + perSec*time.Since(start).Seconds()
	r.Accuracy = float64(r.Allowed) / r.Limit
	return r, nil
}

func printBenchOps(w io.Writer, o *baOps) {
	if o == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Client writes while the background sweeper deletes expired rows (1 instance), against an empty store:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| store | expired rows | write p99 ms, empty | write p99 ms, sweeping | ratio (≤ 1.5) | sweep rows/s | sweep s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, s := range o.Sweep {
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.2f× | %.0f | %.1f |\n", s.Store, s.Rows, s.EmptyP99Ms, s.SweepingP99Ms, s.P99Ratio, s.SweepRowsPerS, s.SweepSeconds)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Delegation create limit (burst 30, 0.5/s, one address, round-robin over the instances):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| store | instances | sent | allowed | limit | allowed ÷ limit (≤ 1.1) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	sort.SliceStable(o.Limits, func(i, j int) bool { return o.Limits[i].Store < o.Limits[j].Store })
	for _, l := range o.Limits {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f | %.2f |\n", l.Store, l.Instances, l.Sent, l.Allowed, l.Limit, l.Accuracy)
	}
}

// benchStartHook, when set, gives benchCell instances running already.
var benchStartHook func(ctx context.Context, spec string, n int) ([]string, func(), error)

func newBenchClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}
}

// benchOps measures the sweep and the rate-limit figures on both stores.
func benchOps(ctx context.Context, pg *pgtest.Server, tmp string, rows, clients int, d time.Duration, progress func(string, ...any)) (*baOps, error) {
	o := &baOps{}
	spec := func(store, name string) (string, error) {
		if store == "sqlite" {
			return "sqlite:" + filepath.Join(tmp, "ops-"+name+".db"), nil
		}
		return pg.NewDatabase(ctx)
	}
	for _, store := range []string{"sqlite", "postgres"} {
		empty, err := spec(store, "empty")
		if err != nil {
			return nil, err
		}
		full, err := spec(store, "full")
		if err != nil {
			return nil, err
		}
		progress("%s: client writes on an empty store, then while %d expired rows are swept", store, rows)
		s, err := benchSweep(ctx, store, empty, full, rows, clients, d, progress)
		if err != nil {
			return nil, err
		}
		o.Sweep = append(o.Sweep, s)
		for _, n := range []int{1, 3} {
			sp, err := spec(store, fmt.Sprint("limit-", n))
			if err != nil {
				return nil, err
			}
			progress("%s: the create limit with %d instance(s)", store, n)
			l, err := benchLimit(ctx, store, sp, n, d)
			if err != nil {
				return nil, err
			}
			o.Limits = append(o.Limits, l)
		}
	}
	return o, nil
}
