package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/cliflags"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// The authority benchmark (make bench-authority): real instances on
// loopback (authority.NewServer behind httpserver.Authority, as pling
// authority runs them), each with its own store handle, on one SQLite file
// or one PostgreSQL database of a throwaway cluster (internal/testing/pgtest);
// clients spread round-robin over the instances, each on a task of its
// own, so that the figures are the service's cost, not contention.

const benchOrigin = "https://shop.example"
const benchOpKey = "operator-key-for-bench"

// baCell is one measured cell: an operation on a store with n instances.
type baCell struct {
	Store     string  `json:"store"`
	Instances int     `json:"instances"`
	Op        string  `json:"op"`
	Clients   int     `json:"clients"`
	Seconds   float64 `json:"seconds"`
	Ops       int     `json:"ops"`
	OpsPerSec float64 `json:"opsPerSec"`
	P50Ms     float64 `json:"p50Ms"`
	P99Ms     float64 `json:"p99Ms"`
	Errors    int     `json:"errors"`
}

type baBrowser struct {
	Invokes int `json:"invokes"`
	// Median round trips (ms) of an invoke through the agent client over
	// CDP: a write action on a page without authority (local guard only),
	// a read action and the write action on a page configured with
	// authority and a delegated session.
	LocalWriteMs     float64 `json:"localWriteP50Ms"`
	AuthorityReadMs  float64 `json:"authorityReadP50Ms"`
	AuthorityWriteMs float64 `json:"authorityWriteP50Ms"`
	// WriteRatio is AuthorityWriteMs / LocalWriteMs; CheckRatio is
	// AuthorityWriteMs / AuthorityReadMs (the shared check alone, the
	// session's verification being in both).
	WriteRatio float64 `json:"writeRatio"`
	CheckRatio float64 `json:"checkRatio"`
	Store      string  `json:"store"`
	Browser    string  `json:"browser,omitempty"`
	Skipped    string  `json:"skipped,omitempty"`
}

type baReport struct {
	Date    string         `json:"date"`
	Machine map[string]any `json:"machine"`
	Cells   []baCell       `json:"cells"`
	// Ratios: PostgreSQL ÷ SQLite and 3 instances ÷ 1, of throughput.
	Ratios  map[string]float64 `json:"ratios"`
	Browser *baBrowser         `json:"browser,omitempty"`
	Ops     *baOps             `json:"ops,omitempty"`
}

func runBenchAuthority(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := cliflags.New("authority", stderr,
		"Usage: pling-bench authority [flags]",
		"Measures lease acquire/release and task writes on SQLite and PostgreSQL with 1 and 3 instances, and the shared replay check in Chromium.",
	)
	dur := fl.Duration("d", 3*time.Second, "duration of each cell")
	clients := fl.Int("clients", 16, "concurrent clients per cell")
	out := fl.String("out", filepath.Join("e2e", "artifacts", "bench-authority.json"), "write the figures as JSON here, and Markdown beside it (.md)")
	dist := fl.String("dist", "dist", "the module directory for the Chromium part (make wasm); empty skips it")
	chromium := fl.String("chromium", "", "the browser binary (default $PLING_CHROMIUM, else /usr/bin/chromium)")
	invokes := fl.Int("n", 100, "invokes per page in the Chromium part")
	cells := fl.Bool("cells", true, "measure the lease and write cells (false: only the sweep and rate-limit figures, and Chromium)")
	sweepRows := fl.Int("sweep-rows", 1_000_000, "expired rows the sweeper deletes while clients write (0 skips the sweep and rate-limit figures)")
	_, exit, ok := cliflags.Parse(fl, args)
	if !ok {
		return exit
	}
	fail := failer(stderr, "authority")
	progress := progressTo(stderr, "· ")
	rep := &baReport{Date: reportDate(), Machine: map[string]any{"cpus": goruntime.NumCPU(), "loadStart": loadAverage()},
		Ratios: map[string]float64{}}

	progress("starting a throwaway PostgreSQL cluster")
	pg, err := pgtest.Start()
	if err != nil {
		return fail("%v (the PostgreSQL cells need the server binaries: make deps)", err)
	}
	defer pg.Stop()
	tmp, err := os.MkdirTemp("", "pling-bench-authority-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)

	for _, store := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 3} {
			for _, op := range []string{"lease", "write"} {
				if !*cells {
					continue
				}
				var spec string
				if store == "sqlite" {
					spec = "sqlite:" + filepath.Join(tmp, fmt.Sprintf("%s-%d-%s.db", store, n, op))
				} else if spec, err = pg.NewDatabase(ctx); err != nil {
					return fail("%v", err)
				}
				progress("%s, %d instance(s), %s: %v with %d clients", store, n, op, *dur, *clients)
				c, err := benchCell(ctx, spec, n, op, *clients, *dur)
				if err != nil {
					return fail("%s %d %s: %v", store, n, op, err)
				}
				c.Store = store
				rep.Cells = append(rep.Cells, c)
			}
		}
	}
	cell := func(store string, n int, op string) baCell {
		for _, c := range rep.Cells {
			if c.Store == store && c.Instances == n && c.Op == op {
				return c
			}
		}
		return baCell{}
	}
	for _, op := range []string{"lease", "write"} {
		for _, n := range []int{1, 3} {
			rep.Ratios[fmt.Sprintf("%s: postgres/sqlite, %d instance(s)", op, n)] = baRatio(cell("postgres", n, op).OpsPerSec, cell("sqlite", n, op).OpsPerSec)
		}
		for _, s := range []string{"sqlite", "postgres"} {
			rep.Ratios[fmt.Sprintf("%s: 3/1 instances, %s", op, s)] = baRatio(cell(s, 3, op).OpsPerSec, cell(s, 1, op).OpsPerSec)
		}
	}
	if *sweepRows > 0 {
		o, err := benchOps(ctx, pg, tmp, *sweepRows, *clients, *dur, progress)
		if err != nil {
			return fail("ops: %v", err)
		}
		rep.Ops = o
	}
	if *dist != "" {
		progress("Chromium: %d invokes per page, a write with and without authority", *invokes)
		b, err := benchAuthorityBrowser(ctx, *dist, *chromium, tmp, *invokes)
		if err != nil {
			return fail("chromium: %v", err)
		}
		rep.Browser = b
	}
	rep.Machine["loadEnd"] = loadAverage()

	var md bytes.Buffer
	printBenchAuthority(&md, rep)
	stdout.Write(md.Bytes())
	if *out != "" {
		stem, err := writeArtifact(*out, rep)
		if err != nil {
			return fail("%v", err)
		}
		if err := os.WriteFile(stem+".md", md.Bytes(), 0o644); err != nil {
			return fail("%v", err)
		}
		progress("wrote %s and its .md", *out)
	}
	return 0
}

// benchInstances starts n instances on spec (opsInstances) and returns
// their URLs and a stop function.
func benchInstances(ctx context.Context, spec string, n int, audiences map[string][]string) ([]string, func(), error) {
	insts, stop, err := opsInstances(ctx, spec, n, func(c *authority.Config) { c.Audiences = audiences })
	if err != nil {
		return nil, nil, err
	}
	urls := make([]string, len(insts))
	for i, in := range insts {
		urls[i] = in.url
	}
	return urls, stop, nil
}

// baCall sends one JSON request and decodes the answer.
func baCall(cl *http.Client, url, method, path, tok string, hdr map[string]string, body any) (int, map[string]any, error) {
	a, err := authoritytest.Do(context.Background(), cl, url, method, path, tok, hdr, body)
	return a.Status, a.Body, err
}

// benchGrant runs the device grant on the instances and returns the
// session's token and id.
func benchGrant(cl *http.Client, urls []string, audience string, scope []string) (string, string, error) {
	st, b, err := baCall(cl, urls[0], "POST", "/v1/delegations", "", nil, map[string]any{"audience": audience, "scope": scope, "ttlSeconds": 3600, "agent": "bench"})
	if err != nil || st != 201 {
		return "", "", fmt.Errorf("create: %d %v %v", st, b, err)
	}
	id, secret := b["id"].(string), b["pollSecret"].(string)
	if st, b, err := baCall(cl, urls[len(urls)-1], "POST", "/v1/delegations/"+id+"/approve", benchOpKey, nil, map[string]any{"subject": "bench"}); err != nil || st != 200 {
		return "", "", fmt.Errorf("approve: %d %v %v", st, b, err)
	}
	st, b, err = baCall(cl, urls[0], "POST", "/v1/delegations/"+id+"/token", "", nil, map[string]any{"pollSecret": secret})
	if err != nil || st != 200 {
		return "", "", fmt.Errorf("collect: %d %v %v", st, b, err)
	}
	return b["token"].(string), b["sessionId"].(string), nil
}

// benchCell measures op with clients on n instances of spec for d.
// "lease": acquire then release, each a measured call; "write": a PUT
// with If-Match under the client's own lease.
func benchCell(ctx context.Context, spec string, n int, op string, clients int, d time.Duration) (baCell, error) {
	startInst := func(ctx context.Context, spec string, n int) ([]string, func(), error) {
		return benchInstances(ctx, spec, n, map[string][]string{benchOrigin: {"orders.*"}})
	}
	if benchStartHook != nil {
		startInst = benchStartHook // instances running already (benchauthority_ops.go)
	}
	urls, stop, err := startInst(ctx, spec, n)
	if err != nil {
		return baCell{}, err
	}
	defer stop()
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
	defer cl.CloseIdleConnections()
	tok, _, err := benchGrant(cl, urls, benchOrigin, []string{"orders.read"})
	if err != nil {
		return baCell{}, err
	}
	type client struct {
		url, task, lease string
		rev              int64
	}
	cs := make([]*client, clients)
	for i := range cs {
		c := &client{url: urls[i%n], task: fmt.Sprintf("bench-%d", i), rev: 1}
		if st, b, err := baCall(cl, c.url, "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": c.task, "state": map[string]any{"n": 0}}); err != nil || st != 201 {
			return baCell{}, fmt.Errorf("create task: %d %v %v", st, b, err)
		}
		if op == "write" {
			st, b, err := baCall(cl, c.url, "POST", "/v1/tasks/"+c.task+"/lease", tok, nil, map[string]any{"holder": c.task, "ttlSeconds": 600})
			if err != nil || st != 200 {
				return baCell{}, fmt.Errorf("lease: %d %v %v", st, b, err)
			}
			c.lease = b["leaseId"].(string)
		}
		cs[i] = c
	}
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			timed := func(want int, method, path string, hdr map[string]string, body any) map[string]any {
				t0 := time.Now()
				st, b, err := baCall(cl, c.url, method, path, tok, hdr, body)
				mine = append(mine, time.Since(t0))
				if err != nil || st != want {
					bad++
					return nil
				}
				return b
			}
			for time.Now().Before(deadline) {
				switch op {
				case "lease":
					b := timed(200, "POST", "/v1/tasks/"+c.task+"/lease", nil, map[string]any{"holder": c.task, "ttlSeconds": 30})
					if b != nil {
						timed(200, "POST", "/v1/tasks/"+c.task+"/lease/release", nil, map[string]any{"leaseId": b["leaseId"]})
					}
				case "write":
					if b := timed(200, "PUT", "/v1/tasks/"+c.task, map[string]string{"If-Match": fmt.Sprintf(`"%d"`, c.rev)},
						map[string]any{"leaseId": c.lease, "state": map[string]any{"n": c.rev}}); b != nil {
						c.rev++
					}
				}
			}
			mu.Lock()
			lat, errs = append(lat, mine...), errs+bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	return baCell{Instances: n, Op: op, Clients: clients, Seconds: el.Seconds(), Ops: len(lat),
		OpsPerSec: float64(len(lat)) / el.Seconds(), P50Ms: q(0.50), P99Ms: q(0.99), Errors: errs}, nil
}

func printBenchAuthority(w io.Writer, r *baReport) {
	fmt.Fprintf(w, "# pling-bench authority, %s\n\n", r.Date)
	fmt.Fprintf(w, "%v CPUs, load average %v at the start, %v at the end; instances on loopback, each with its own store handle; clients round-robin over the instances, each on its own task.\n\n",
		r.Machine["cpus"], r.Machine["loadStart"], r.Machine["loadEnd"])
	fmt.Fprintln(w, "| store | instances | operation | clients | ops/s | p50 ms | p99 ms | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, c := range r.Cells {
		name := map[string]string{"lease": "lease acquire / release", "write": "task write (If-Match)"}[c.Op]
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.0f | %.2f | %.2f | %d |\n", c.Store, c.Instances, name, c.Clients, c.OpsPerSec, c.P50Ms, c.P99Ms, c.Errors)
	}
	fmt.Fprintln(w)
	keys := make([]string, 0, len(r.Ratios))
	for k := range r.Ratios {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "Throughput ratios:")
	fmt.Fprintln(w)
	for _, k := range keys {
		fmt.Fprintf(tw, "- %s:\t%.2f×\n", k, r.Ratios[k])
	}
	tw.Flush()
	printBenchOps(w, r.Ops)
	if b := r.Browser; b != nil {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Chromium (%s), %d invokes per page through the agent client over CDP, medians; the authority on %s:\n\n", b.Browser, b.Invokes, b.Store)
		fmt.Fprintln(w, "| page | action | p50 ms |")
		fmt.Fprintln(w, "|---|---|---|")
		fmt.Fprintf(w, "| without authority (local guard) | write | %.2f |\n", b.LocalWriteMs)
		fmt.Fprintf(w, "| with authority, delegated session | read | %.2f |\n", b.AuthorityReadMs)
		fmt.Fprintf(w, "| with authority, delegated session | write (shared replay check) | %.2f |\n", b.AuthorityWriteMs)
		fmt.Fprintf(w, "\nShared check ÷ local guard (write ÷ write): **%.2f×**; write ÷ read on the authority page: %.2f×.\n", b.WriteRatio, b.CheckRatio)
	}
}
