package runtime_test

// Benchmarks of describe and invoke through Runtime.Handle. Machines are
// noisy, so every benchmark reports a RATIO measured side by side in the
// same run: the operation runs under the benchmark timer and, interleaved
// with it in rounds (timer stopped), a baseline runs under its own timer.
// ns/op and allocs/op are the operation's; the ratio metric compares it
// with the baseline measured under the same conditions.
//
//	go test -run '^$' -bench . -benchmem ./runtime/
//
// TestDescribeCacheReuse shows the describe cache at work without timing:
// allocation counts are deterministic.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// benchRounds is how many times the operation and its baseline alternate
// in one benchmark run.
const benchRounds = 64

// sideBySide runs op b.N times under the benchmark timer. After every
// chunk of ops (benchRounds chunks in all) it stops the timer, runs
// between (untimed housekeeping) and base, which times itself and returns
// how long its runs took and how many there were. It reports metric =
// (time per op) / (time per base run), and base's time per run as
// metric+"-base-ns".
func sideBySide(b *testing.B, metric string, op func(i int), base func(n int) (time.Duration, int), between func()) {
	b.Helper()
	chunk := (b.N + benchRounds - 1) / benchRounds
	var baseDur time.Duration
	baseN := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op(i)
		if (i+1)%chunk == 0 || i == b.N-1 {
			b.StopTimer()
			if between != nil {
				between()
			}
			d, n := base(i%chunk + 1)
			baseDur += d
			baseN += n
			b.StartTimer()
		}
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	perBase := float64(baseDur.Nanoseconds()) / float64(baseN)
	b.ReportMetric(perOp/perBase, metric)
	b.ReportMetric(perBase, metric+"-base-ns")
}

// timeRuns is a base for sideBySide: f run n times, timed.
func timeRuns(f func()) func(n int) (time.Duration, int) {
	return func(n int) (time.Duration, int) {
		start := time.Now()
		for range n {
			f()
		}
		return time.Since(start), n
	}
}

// benchGuard is the built-in MemoryReplayGuard, replaceable while a
// benchmark's timer is stopped: every op consumes a fresh id, and the
// guard refuses new ids at capacity (fail closed) while the fake clock
// never expires them.
type benchGuard struct {
	g    *runtime.MemoryReplayGuard
	used int
}

func newBenchGuard() *benchGuard {
	return &benchGuard{g: runtime.NewMemoryReplayGuard(runtime.DefaultReplayCapacity, runtime.DefaultReplaySessionCapacity)}
}

func (bg *benchGuard) Consume(ctx context.Context, session, id string, expiresAtMs, nowMs int64) (*runtime.ReplayRecord, error) {
	bg.used++
	return bg.g.Consume(ctx, session, id, expiresAtMs, nowMs)
}

func (bg *benchGuard) Complete(ctx context.Context, session, id string, outcome runtime.ReplayRecord) {
	bg.g.Complete(ctx, session, id, outcome)
}

// refresh replaces a guard that filled up halfway.
func (bg *benchGuard) refresh() {
	if bg.used > runtime.DefaultReplayCapacity/2 {
		bg.g, bg.used = runtime.NewMemoryReplayGuard(runtime.DefaultReplayCapacity, runtime.DefaultReplaySessionCapacity), 0
	}
}

// benchRuntime is a runtime configured for measuring: everything exposed,
// no rate limit (a zero Burst is unlimited), a fake clock, a replaceable
// replay guard and bounds large enough to list everything.
func benchRuntime(extra ...runtime.Option) (*runtime.Runtime, *benchGuard) {
	lim := runtime.DefaultLimits()
	lim.MaxCapabilities = 1 << 20
	lim.MaxBytes = 256 << 20
	g := newBenchGuard()
	opts := []runtime.Option{
		runtime.WithExpose("*"),
		runtime.WithLimits(lim),
		runtime.WithClock(runtime.NewFakeClock(0)),
		runtime.WithRateLimit(runtime.RateLimit{Describe: runtime.Bucket{}, Invoke: runtime.Bucket{}}),
		runtime.WithReplayGuard(g),
	}
	return runtime.New(append(opts, extra...)...), g
}

// declarePlain declares n plain actions with two params each.
func declarePlain(tb testing.TB, rt *runtime.Runtime, n int) {
	tb.Helper()
	lo := 1.0
	for i := range n {
		_, err := rt.DeclareAction(runtime.Action{
			ID: fmt.Sprintf("act_%05d", i), Title: fmt.Sprintf("Action %d", i), Description: "Adds the item to the cart",
			Params: map[string]runtime.Param{
				"sku": {Type: "string", Required: true, Description: "The item"},
				"qty": {Type: "integer", Minimum: &lo, Description: "How many"},
			},
			Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil },
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// reqBuf builds requests with a fresh id each time, without allocating.
type reqBuf struct {
	buf  []byte
	next int64
	pre  string
	post string
}

func describeReqs() *reqBuf {
	return &reqBuf{pre: `{"protocol":"pling.surface/0.1","id":"b`, post: `","method":"describe"}`}
}

func invokeReqs(capability string) *reqBuf {
	return &reqBuf{pre: `{"protocol":"pling.surface/0.1","id":"b`,
		post: `","method":"invoke","capability":"` + capability + `","input":{}}`}
}

func (r *reqBuf) fresh() []byte {
	r.next++
	r.buf = append(r.buf[:0], r.pre...)
	r.buf = strconv.AppendInt(r.buf, r.next, 10)
	r.buf = append(r.buf, r.post...)
	return r.buf
}

// okResult returns the result of an ok:true response.
func okResult(tb testing.TB, out []byte) json.RawMessage {
	tb.Helper()
	var resp schema.SurfaceResponse
	if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
		tb.Fatalf("request failed: %v %.300s", err, out)
	}
	return resp.Result
}

func decodeDescription(tb testing.TB, out []byte) *schema.SurfaceDescription {
	tb.Helper()
	var d schema.SurfaceDescription
	if err := json.Unmarshal(okResult(tb, out), &d); err != nil {
		tb.Fatal(err)
	}
	return &d
}

// BenchmarkDescribe: a repeated describe of n plain actions through
// Handle; x-json.Marshal is its time over json.Marshal of the same
// SurfaceDescription value.
func BenchmarkDescribe(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("actions=%d", n), func(b *testing.B) {
			rt, guard := benchRuntime()
			declarePlain(b, rt, n)
			reqs := describeReqs()
			ctx := context.Background()
			d := decodeDescription(b, rt.Handle(ctx, reqs.fresh()))
			if len(d.Capabilities) != n || d.Truncated != nil {
				b.Fatalf("listed %d of %d (truncated %+v)", len(d.Capabilities), n, d.Truncated)
			}
			sideBySide(b, "x-json.Marshal",
				func(int) { rt.Handle(ctx, reqs.fresh()) },
				timeRuns(func() { _, _ = json.Marshal(d) }),
				guard.refresh)
		})
	}
}

// BenchmarkDescribeFolded: one template action over n records (20 visible,
// the rest offscreen), ratio to json.Marshal of its description.
func BenchmarkDescribeFolded(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			rt, guard := benchRuntime()
			rows := make([]runtime.RecordItem, n)
			for i := range rows {
				rows[i] = runtime.RecordItem{ID: fmt.Sprintf("ord_%d", i+1), Label: fmt.Sprintf("#%d · pending", 1001+i), Offscreen: i >= 20}
			}
			if _, err := rt.DeclareRecords(runtime.Records{Kind: "order",
				Read: func(context.Context) ([]runtime.RecordItem, error) { return rows, nil }}); err != nil {
				b.Fatal(err)
			}
			if _, err := rt.DeclareAction(runtime.Action{ID: "approve", Title: "Approve order",
				Params: map[string]runtime.Param{"note": {Type: "string"}},
				Record: &runtime.RecordRef{Kind: "order"},
				Run:    func(context.Context, *runtime.Call) (any, error) { return nil, nil }}); err != nil {
				b.Fatal(err)
			}
			reqs := describeReqs()
			ctx := context.Background()
			d := decodeDescription(b, rt.Handle(ctx, reqs.fresh()))
			if len(d.Capabilities) != 1 || d.Capabilities[0].Record == nil || d.Capabilities[0].Record.Total != n {
				b.Fatalf("folded description: %+v", d.Capabilities)
			}
			sideBySide(b, "x-json.Marshal",
				func(int) { rt.Handle(ctx, reqs.fresh()) },
				timeRuns(func() { _, _ = json.Marshal(d) }),
				guard.refresh)
		})
	}
}

// BenchmarkInvokeNoop: the whole invoke pipeline around a handler that
// does nothing, ratio to json.Marshal of its result. Loop detection stays
// on (it is part of every invoke) with a bound that this run never hits.
func BenchmarkInvokeNoop(b *testing.B) {
	rt, guard := benchRuntime(runtime.WithLoop(runtime.LoopConfig{Repeats: math.MaxInt32, Window: time.Minute}))
	if _, err := rt.DeclareAction(runtime.Action{ID: "noop", Title: "Do nothing", Risk: schema.RiskRead,
		Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil }}); err != nil {
		b.Fatal(err)
	}
	reqs := invokeReqs("noop")
	ctx := context.Background()
	var res schema.SurfaceInvokeResult
	if err := json.Unmarshal(okResult(b, rt.Handle(ctx, reqs.fresh())), &res); err != nil {
		b.Fatal(err)
	}
	if res.Error != nil || res.Evidence == nil {
		b.Fatalf("noop invoke: %+v", res)
	}
	sideBySide(b, "x-json.Marshal",
		func(int) { rt.Handle(ctx, reqs.fresh()) },
		timeRuns(func() { _, _ = json.Marshal(&res) }),
		guard.refresh)
}

// BenchmarkDescribeCached: ns/op and allocs/op are a repeated describe of
// an unchanged registry for the same session (the cached path);
// repeat/first is its time over the first describe of a freshly built
// runtime (snapshot and encoding from scratch). One fresh runtime is built
// per round with the timer stopped; only its first describe is timed. The
// heap is collected (untimed) around each build, so the garbage of building
// runtimes is billed to neither side.
func BenchmarkDescribeCached(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("actions=%d", n), func(b *testing.B) {
			ctx := context.Background()
			warm, guard := benchRuntime()
			declarePlain(b, warm, n)
			reqs := describeReqs()
			if d := decodeDescription(b, warm.Handle(ctx, reqs.fresh())); len(d.Capabilities) != n {
				b.Fatalf("listed %d of %d", len(d.Capabilities), n)
			}
			// Both sides write the response into a reused buffer, as a
			// server writes it to its connection (HandleTo): the figure is
			// the runtime's work, not the allocation of a response-sized
			// slice, which Handle adds to both sides alike.
			var outFirst, outRepeat bytes.Buffer
			first := func(int) (time.Duration, int) {
				rt, _ := benchRuntime()
				declarePlain(b, rt, n)
				req := describeReqs().fresh()
				outFirst.Reset()
				goruntime.GC() // the build's garbage is billed to neither side
				start := time.Now()
				rt.HandleTo(ctx, req, &outFirst)
				return time.Since(start), 1
			}
			sideBySide(b, "repeat/first",
				func(int) { outRepeat.Reset(); warm.HandleTo(ctx, reqs.fresh(), &outRepeat) },
				first,
				func() { guard.refresh(); goruntime.GC() }) // nor the last fresh runtime's
		})
	}
}

// TestDescribeCacheReuse proves the describe cache is used, by allocation
// counts rather than time: a repeated describe of an unchanged registry of
// 1,000 capabilities for the same session allocates at most a tenth of
// what the first describe of a fresh runtime does, and describes the same
// bytes; a change of the registry is seen at once.
func TestDescribeCacheReuse(t *testing.T) {
	const n, runs = 1000, 10
	ctx := context.Background()
	fresh := make([]*runtime.Runtime, runs+1) // AllocsPerRun adds a warm-up run
	for i := range fresh {
		fresh[i], _ = benchRuntime()
		declarePlain(t, fresh[i], n)
	}
	firstReq := []byte(`{"protocol":"pling.surface/0.1","id":"first","method":"describe"}`)
	var firstOut []byte
	k := 0
	firstAllocs := testing.AllocsPerRun(runs, func() {
		firstOut = fresh[k].Handle(ctx, firstReq)
		k++
	})

	warm := fresh[0] // described once, by the warm-up run
	reqs := describeReqs()
	var repeatOut []byte
	repeatAllocs := testing.AllocsPerRun(100, func() { repeatOut = warm.Handle(ctx, reqs.fresh()) })
	t.Logf("describe of %d capabilities: first %.0f allocs, repeat %.0f allocs (first/repeat %.1f×)",
		n, firstAllocs, repeatAllocs, firstAllocs/max(repeatAllocs, 1))
	if repeatAllocs*10 > firstAllocs {
		t.Errorf("repeated describe allocates %.0f, more than 1/10 of the first (%.0f): the cache is not used",
			repeatAllocs, firstAllocs)
	}

	// The cached description is the one a fresh runtime computes.
	fr, rr := okResult(t, firstOut), okResult(t, repeatOut)
	if string(fr) != string(rr) {
		t.Errorf("repeated describe differs from a fresh one:\nfresh  %.200s\nrepeat %.200s", fr, rr)
	}
	// A registry change is described at once, with a new revision.
	before := decodeDescription(t, warm.Handle(ctx, reqs.fresh()))
	h, err := warm.DeclareAction(runtime.Action{ID: "zz_new", Title: "New"})
	if err != nil {
		t.Fatal(err)
	}
	after := decodeDescription(t, warm.Handle(ctx, reqs.fresh()))
	if len(after.Capabilities) != n+1 || after.Capabilities[n].ID != "zz_new" || after.Revision == before.Revision {
		t.Errorf("after a declaration: %d capabilities, last %q, revision %s → %s",
			len(after.Capabilities), after.Capabilities[len(after.Capabilities)-1].ID, before.Revision, after.Revision)
	}
	h.Dispose()
	again := decodeDescription(t, warm.Handle(ctx, reqs.fresh()))
	if len(again.Capabilities) != n || again.Revision != before.Revision {
		t.Errorf("after disposing it: %d capabilities, revision %s (want %d, %s)", len(again.Capabilities), again.Revision, n, before.Revision)
	}
}

// allowGuard is a ReplayGuard that remembers nothing and allows every id:
// the "no gate" side of BenchmarkGateOverhead.
type allowGuard struct{}

func (allowGuard) Consume(context.Context, string, string, int64, int64) (*runtime.ReplayRecord, error) {
	return nil, nil
}
func (allowGuard) Complete(context.Context, string, string, runtime.ReplayRecord) {}

// BenchmarkGateOverhead: the same no-op invoke through Handle, with and
// without the gate. ns/op and allocs/op are the gated invoke: a valid
// Ed25519 delegation token verified by the built-in TokenVerifier
// (WithSessions(v, true), WithOrigin), the built-in TokenBucketLimiter with
// a burst this run never spends, the built-in MemoryReplayGuard (replaced,
// timer stopped, before it fills) and a MemoryAudit sink. gated/ungated is
// its time over the same invoke with no gate, measured side by side: no
// session (anonymous), an unlimited limiter (zero Burst), a guard that
// allows every id, no audit. Target: at most 1.5.
func BenchmarkGateOverhead(b *testing.B) {
	const startMs = 10_000
	ctx := context.Background()
	loop := runtime.WithLoop(runtime.LoopConfig{Repeats: math.MaxInt32, Window: time.Minute})
	noop := runtime.Action{ID: "noop", Title: "Do nothing", Risk: schema.RiskRead,
		Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil }}

	key := testKey(7)
	v := verifierK1(b, key)
	tok := mint(b, key, "k1", runtime.Claims{Subject: "alice", Audience: origin, Scope: []string{"*"},
		IssuedAtMs: startMs, NotBeforeMs: startMs, ExpiresAtMs: 1 << 50, ID: "bench-1"})
	audit := runtime.NewMemoryAudit(4096)
	gated, guard := benchRuntime(
		runtime.WithClock(runtime.NewFakeClock(startMs)),
		runtime.WithSessions(v, true), runtime.WithOrigin(origin),
		// 1e9 tokens (1e18 nano-tokens, within int64); the fake clock
		// stands still, so nothing refills and nothing runs out.
		runtime.WithRateLimit(runtime.RateLimit{Describe: runtime.Bucket{Burst: 1e9}, Invoke: runtime.Bucket{Burst: 1e9}}),
		runtime.WithAudit(audit), loop)
	plain := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(startMs)),
		runtime.WithRateLimit(runtime.RateLimit{}), runtime.WithReplayGuard(allowGuard{}), loop)
	for _, rt := range []*runtime.Runtime{gated, plain} {
		if _, err := rt.DeclareAction(noop); err != nil {
			b.Fatal(err)
		}
	}
	gatedReqs := &reqBuf{pre: `{"protocol":"pling.surface/0.1","id":"g`,
		post: `","method":"invoke","session":"` + tok + `","capability":"noop","input":{}}`}
	plainReqs := invokeReqs("noop")

	// Both sides succeed the same way, and the gate is really on: a
	// request without the session is refused, a replayed id is detected,
	// and every request is audited.
	g0, p0 := gatedReqs.fresh(), plainReqs.fresh()
	gr, pr := okResult(b, gated.Handle(ctx, g0)), okResult(b, plain.Handle(ctx, p0))
	if string(gr) != string(pr) {
		b.Fatalf("gated and ungated results differ:\n%s\n%s", gr, pr)
	}
	if out := string(gated.Handle(ctx, g0)); !strings.Contains(out, `"REPLAY_DETECTED"`) {
		b.Fatalf("gated replay: %s", out)
	}
	if out := string(gated.Handle(ctx, plainReqs.fresh())); !strings.Contains(out, `"SESSION_REQUIRED"`) {
		b.Fatalf("gated without a session: %s", out)
	}
	if n := len(audit.Events()); n != 3 {
		b.Fatalf("%d audit events, want 3", n)
	}
	okResult(b, plain.Handle(ctx, p0)) // the ungated guard allows a repeat

	sideBySide(b, "gated/ungated",
		func(int) { gated.Handle(ctx, gatedReqs.fresh()) },
		timeRuns(func() { plain.Handle(ctx, plainReqs.fresh()) }),
		guard.refresh)
}

// BenchmarkDescribeRows: a dashboard's describe at 10,000 rows, with five
// row actions of the kind checked row by row and a cheap reader (the page
// keeps its rows, docs/page-api.md §2.5), as a ratio to the same page at 100 rows
// (x-100rows; the target is at most 5).
func BenchmarkDescribeRows(b *testing.B) {
	page := func(n int) (*runtime.Runtime, *benchGuard) {
		rt, guard := benchRuntime()
		status := make(map[string]string, n)
		for i := range n {
			status[fmt.Sprintf("ord_%d", i+1)] = []string{"pending", "paid", "shipped"}[i%3]
		}
		rows := make([]runtime.RecordItem, 0, n)
		for i := range n {
			rows = append(rows, runtime.RecordItem{ID: "ord_" + strconv.Itoa(i+1), Label: "#" + strconv.Itoa(1001+i), Offscreen: i >= 50})
		}
		if _, err := rt.DeclareRecords(runtime.Records{Kind: "order", Read: func(context.Context) ([]runtime.RecordItem, error) {
			return rows, nil
		}}); err != nil {
			b.Fatal(err)
		}
		for _, a := range []struct{ id, from string }{{"pay", "pending"}, {"ship", "paid"}, {"deliver", "shipped"}, {"cancel", "pending"}, {"refund", "paid"}} {
			if _, err := rt.DeclareAction(runtime.Action{ID: a.id, Title: a.id, Record: &runtime.RecordRef{Kind: "order"},
				Available: func(_ context.Context, id string) runtime.Availability {
					if id == "" || status[id] != a.from {
						return runtime.Unavailable("not " + a.from)
					}
					return runtime.Available
				},
				Run: func(context.Context, *runtime.Call) (any, error) { return nil, nil }}); err != nil {
				b.Fatal(err)
			}
		}
		return rt, guard
	}
	ctx := context.Background()
	big, bigGuard := page(10000)
	small, smallGuard := page(100)
	bigReqs, smallReqs := describeReqs(), describeReqs()
	for _, c := range []struct {
		rt   *runtime.Runtime
		reqs *reqBuf
		n    int
	}{{big, bigReqs, 10000}, {small, smallReqs, 100}} {
		d := decodeDescription(b, c.rt.Handle(ctx, c.reqs.fresh()))
		if len(d.Capabilities) != 5 || d.Context.Records["order"].Total != c.n {
			b.Fatalf("%d rows: capabilities %d, total %d", c.n, len(d.Capabilities), d.Context.Records["order"].Total)
		}
	}
	sideBySide(b, "x-100rows",
		func(int) { big.Handle(ctx, bigReqs.fresh()) },
		timeRuns(func() { small.Handle(ctx, smallReqs.fresh()) }),
		func() { bigGuard.refresh(); smallGuard.refresh() })
}
