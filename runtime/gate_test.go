package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/hammer"
	"github.com/pling-go/pling/schema"
)

var matchCases = []struct {
	p, id string
	want  bool
}{
	{"*", "cart.add", true},
	{"*", "", true},
	{"*", "approve@order", true},
	{"cart.*", "cart.add", true},
	{"cart.*", "cart.", true},
	{"cart.*", "cart", false},
	{"cart.*", "cartx.add", false},
	{"cart.*", "cart.add.more", true}, // '*' crosses '.'
	{"cart.*", "xcart.add", false},
	{"*@order", "approve@order", true},
	{"*@order", "approve@orders", false},
	{"*@order", "@order", true},
	{"*.add", "cart.add", true},
	{"a*b*c", "abc", true},
	{"a*b*c", "aXXbYYc", true},
	{"a*b*c", "abcabc", true},
	{"a*b*c", "acb", false},
	{"a*b*c", "aXbXcX", false},
	{"a*b*c", "ab", false},
	{"cart.add", "cart.add", true}, // a literal
	{"cart.add", "cart.ad", false},
	{"cart.add", "cart.addd", false},
	{"cart.add", "cart-add", false}, // '.' is not a wildcard
	{"", "", true},
	{"", "cart.add", false},
	{"approve*", "approve@order", true}, // '*' crosses '@'
	{"approve*", "approve:ord_1", true}, // and ':'
	{"a*:*1", "approve:ord_1", true},    // several stars across ':'
	{"**", "x", true},                   // repeated stars
	{"a**b", "ab", true},
	{"*a", "aaaa", true},
	{"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}, // the backtracking trap
	{"?", "x", false},                                               // no '?' wildcard: literal
	{"?", "?", true},
	{"[a]", "a", false},           // no classes
	{"Cart.*", "cart.add", false}, // case-sensitive
	{"x*", "*", false},
	{"*", "*", true},
	{"\\*", "\\x", true}, // no escapes: '\\' is a literal and '*' a wildcard
}

func TestMatch(t *testing.T) {
	for _, tt := range matchCases {
		t.Run(fmt.Sprintf("%q~%q", tt.p, tt.id), func(t *testing.T) {
			if got := Match(tt.p, tt.id); got != tt.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tt.p, tt.id, got, tt.want)
			}
			if got := refMatch(tt.p, tt.id); got != tt.want {
				t.Errorf("the reference disagrees with the table: refMatch(%q, %q) = %v", tt.p, tt.id, got)
			}
		})
	}
}

func TestMatchAny(t *testing.T) {
	if MatchAny(nil, "x") || MatchAny([]string{}, "x") {
		t.Errorf("no patterns match nothing")
	}
	if !MatchAny([]string{"a.*", "b.*"}, "b.x") || MatchAny([]string{"a.*", "b.*"}, "c.x") {
		t.Errorf("MatchAny is not any")
	}
}

// refMatch is the obvious recursive glob: '*' matches any run of bytes.
func refMatch(p, s string) bool {
	if p == "" {
		return s == ""
	}
	if p[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if refMatch(p[1:], s[i:]) {
				return true
			}
		}
		return false
	}
	return s != "" && s[0] == p[0] && refMatch(p[1:], s[1:])
}

func FuzzMatch(f *testing.F) {
	for _, tt := range matchCases {
		f.Add(tt.p, tt.id)
	}
	f.Fuzz(func(t *testing.T, p, id string) {
		// The reference is exponential in the number of stars; keep it
		// small enough to finish.
		if len(p) > 24 || len(id) > 48 || strings.Count(p, "*") > 6 {
			return
		}
		if got, want := Match(p, id), refMatch(p, id); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference %v", p, id, got, want)
		}
	})
}

func TestTokenBucketExact(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		bucket    Bucket
		wantRetry int64 // after the burst is spent, ±0.1%
	}{
		{"2 per second", Bucket{Burst: 3, PerSecond: 2}, 500},
		{"1 per second", Bucket{Burst: 1, PerSecond: 1}, 1000},
		{"half a token per second", Bucket{Burst: 2, PerSecond: 0.5}, 2000},
		{"3 per second (rounds up)", Bucket{Burst: 2, PerSecond: 3}, 334},
		{"1000 per second", Bucket{Burst: 5, PerSecond: 1000}, 1},
		{"one per 10 minutes", Bucket{Burst: 1, PerSecond: 1.0 / 600}, 600_000},
		{"one per hour", Bucket{Burst: 1, PerSecond: 1.0 / 3600}, 3_600_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewTokenBucketLimiter(RateLimit{Invoke: tt.bucket, Describe: Bucket{Burst: 1, PerSecond: 1}})
			now := int64(1_000)
			for i := range tt.bucket.Burst {
				if ok, _, err := l.Allow(ctx, "s", schema.MethodInvoke, now); !ok || err != nil {
					t.Fatalf("call %d of the burst refused", i+1)
				}
			}
			ok, retry, err := l.Allow(ctx, "s", schema.MethodInvoke, now)
			if ok || err != nil {
				t.Fatalf("the call after the burst was allowed")
			}
			msg := ""
			if tt.bucket.PerSecond < 0.01 {
				msg = "BUG: ratelimit.go Allow: rate := int64(b.PerSecond * 1000) truncates to whole micro-tokens per ms: " +
					"below 0.001/s the bucket never refills (retryAfterMs is a fixed hour), and slow rates are off (1/600 s refills as 1/1000 s): "
			}
			if d := retry - tt.wantRetry; d < -tt.wantRetry/1000 || d > tt.wantRetry/1000 {
				t.Errorf("%sretryAfterMs = %d, want %d", msg, retry, tt.wantRetry)
			}
			if ok, _, _ := l.Allow(ctx, "s", schema.MethodInvoke, now+retry-1); ok && retry > 1 {
				t.Errorf("allowed 1 ms before retryAfterMs")
			}
			if ok, _, _ := l.Allow(ctx, "s", schema.MethodInvoke, now+retry); !ok {
				t.Errorf("%snot allowed after waiting exactly retryAfterMs (%d)", msg, retry)
			}
		})
	}
}

func TestTokenBucketBudgets(t *testing.T) {
	ctx := context.Background()
	l := NewTokenBucketLimiter(RateLimit{Invoke: Bucket{Burst: 2, PerSecond: 1}, Describe: Bucket{Burst: 3, PerSecond: 1}})
	spend := func(session string, m schema.Method) int {
		n := 0
		for range 10 {
			if ok, _, _ := l.Allow(ctx, session, m, 0); ok {
				n++
			}
		}
		return n
	}
	if got := spend("a", schema.MethodInvoke); got != 2 {
		t.Errorf("invoke burst = %d, want 2", got)
	}
	if got := spend("a", schema.MethodDescribe); got != 3 {
		t.Errorf("describe budget after the invoke budget is spent = %d, want 3 (independent)", got)
	}
	if got := spend("b", schema.MethodInvoke); got != 2 {
		t.Errorf("another session's invoke budget = %d, want 2 (per session)", got)
	}
	// Refill never exceeds the burst.
	if ok, _, _ := l.Allow(ctx, "a", schema.MethodInvoke, 1_000_000); !ok {
		t.Fatal("not refilled")
	}
	n := 1
	for range 10 {
		if ok, _, _ := l.Allow(ctx, "a", schema.MethodInvoke, 1_000_000); ok {
			n++
		}
	}
	if n != 2 {
		t.Errorf("after a long idle time %d calls allowed, want the burst 2", n)
	}
	// Time going backwards refills nothing.
	if ok, _, _ := l.Allow(ctx, "a", schema.MethodInvoke, 0); ok {
		t.Errorf("allowed when the clock went backwards")
	}
	// No budget configured: unlimited.
	u := NewTokenBucketLimiter(RateLimit{})
	for range 1000 {
		if ok, _, _ := u.Allow(ctx, "a", schema.MethodInvoke, 0); !ok {
			t.Fatal("an unconfigured budget limits")
		}
	}
	// A burst with no refill: denied for an hour, not forever-0.
	z := NewTokenBucketLimiter(RateLimit{Invoke: Bucket{Burst: 1}})
	z.Allow(ctx, "a", schema.MethodInvoke, 0)
	if ok, retry, _ := z.Allow(ctx, "a", schema.MethodInvoke, 0); ok || retry != 3_600_000 {
		t.Errorf("no refill: ok %v retry %d", ok, retry)
	}
}

// Through the gate: RATE_LIMITED carries retryAfterMs; a request refused
// at step 7 consumes no id, so the same id is accepted after waiting.
func TestRateLimitThroughHandle(t *testing.T) {
	e := newEnv(t, WithRateLimit(RateLimit{Invoke: Bucket{Burst: 2, PerSecond: 0.5}, Describe: Bucket{Burst: 1, PerSecond: 1}}))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
	for range 2 {
		if got := outcome(t, first(e.invoke("a", nil))); got != "ok" {
			t.Fatalf("within the burst: %s", got)
		}
	}
	req := e.invokeReq("a", nil)
	resp, _ := e.send(req)
	want := &schema.SurfaceFailure{Code: string(perr.RateLimited), Message: "Too many requests", RetryAfterMs: 2000}
	if diff := cmp.Diff(want, resp.Error); diff != "" {
		t.Fatalf("RATE_LIMITED (-want +got):\n%s", diff)
	}
	if *resp.ID != req["id"] {
		t.Errorf("id not echoed")
	}
	// describe has its own budget.
	if r, _ := e.send(e.describeReq()); !r.OK {
		t.Errorf("describe refused: %+v", r.Error)
	}
	if r, _ := e.send(e.describeReq()); r.OK || r.Error.Code != string(perr.RateLimited) || r.Error.RetryAfterMs != 1000 {
		t.Errorf("second describe: %+v", r.Error)
	}
	e.clock.Advance(resp.Error.RetryAfterMs)
	if got := outcome(t, first(e.send(req))); got != "ok" {
		t.Errorf("the same id after waiting retryAfterMs: %s, want ok (a rate-limited request consumes no id)", got)
	}
}

func TestCustomLimiterFailsClosed(t *testing.T) {
	var ran atomic.Int64
	e := newEnv(t, WithLimiter(limiterFunc(func() (bool, int64, error) { return false, 0, errors.New("redis down") })))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Run: counter(&ran, nil)})
	req := e.invokeReq("a", nil)
	if got := outcome(t, first(e.send(req))); got != "protocol:RATE_LIMIT_UNAVAILABLE" || ran.Load() != 0 {
		t.Errorf("outcome %s, ran %d", got, ran.Load())
	}
	// A limiter that says no with a zero wait still gets retryAfterMs ≥ 1.
	e = newEnv(t, WithLimiter(limiterFunc(func() (bool, int64, error) { return false, 0, nil })))
	if r, _ := e.send(e.describeReq()); r.Error == nil || r.Error.RetryAfterMs != 1 {
		t.Errorf("zero wait: %+v", r.Error)
	}
}

func TestMemoryReplayGuard(t *testing.T) {
	ctx := context.Background()
	g := NewMemoryReplayGuard(3, 0)
	if prev, err := g.Consume(ctx, "s", "r1", 1000, 0); prev != nil || err != nil {
		t.Fatalf("first consume: %v, %v", prev, err)
	}
	prev, err := g.Consume(ctx, "s", "r1", 1000, 10)
	if err != nil || prev == nil || *prev != (ReplayRecord{}) {
		t.Errorf("second consume before completion: %+v, %v; want an incomplete record", prev, err)
	}
	g.Complete(ctx, "s", "r1", ReplayRecord{OK: true, Code: "EXECUTION_FAILED"})
	prev, _ = g.Consume(ctx, "s", "r1", 1000, 20)
	if prev == nil || *prev != (ReplayRecord{Completed: true, OK: true, Code: "EXECUTION_FAILED"}) {
		t.Errorf("after completion: %+v", prev)
	}
	g.Complete(ctx, "s", "unknown", ReplayRecord{OK: true}) // completing an unknown id is a no-op
	if prev, _ := g.Consume(ctx, "t", "r1", 1000, 20); prev != nil {
		t.Errorf("the same id in another session is a new id")
	}
	if prev, _ := g.Consume(ctx, "s", "r2", 500, 20); prev != nil {
		t.Errorf("r2: %+v", prev)
	}
	if g.Len() != 3 {
		t.Errorf("Len = %d", g.Len())
	}
	// Full: a new id is refused rather than an old one forgotten.
	if _, err := g.Consume(ctx, "s", "r3", 1000, 30); !errors.Is(err, errReplayGuardFull) {
		t.Errorf("full guard: %v, want errReplayGuardFull", err)
	}
	// A consumed id is still detected while full.
	if prev, err := g.Consume(ctx, "s", "r1", 1000, 30); prev == nil || err != nil {
		t.Errorf("detection while full: %v, %v", prev, err)
	}
	// r2 expires at 500: at 500 it is dropped, freeing room.
	if prev, err := g.Consume(ctx, "s", "r3", 1000, 500); prev != nil || err != nil {
		t.Errorf("after an expiry: %v, %v", prev, err)
	}
	// r2 was dropped: its session has expired, so nothing can replay it,
	// and it is new again (here refused only because the guard is full).
	if prev, err := g.Consume(ctx, "s", "r2", 2000, 500); prev != nil || !errors.Is(err, errReplayGuardFull) {
		t.Errorf("an expired id: %+v, %v", prev, err)
	}
	// At 1000 everything held expires and is collected.
	if _, err := g.Consume(ctx, "s", "r9", 5000, 1000); err != nil {
		t.Fatal(err)
	}
	if g.Len() != 1 {
		t.Errorf("Len after expiry = %d, want 1", g.Len())
	}
	// An id consumed again after its expiry is new.
	if prev, err := g.Consume(ctx, "s", "r1", 5000, 1000); prev != nil || err != nil {
		t.Errorf("an id after its expiry: %+v, %v", prev, err)
	}
}

// Expired entries are dropped by a periodic sweep even when the guard is
// not full.
func TestMemoryReplayGuardSweep(t *testing.T) {
	ctx := context.Background()
	g := NewMemoryReplayGuard(100, 0)
	for i := range 10 {
		g.Consume(ctx, "s", fmt.Sprint(i), 100, 0)
	}
	g.Consume(ctx, "s", "late", 1_000_000, 60_000)
	if g.Len() != 1 {
		t.Errorf("Len = %d after the sweep, want 1", g.Len())
	}
}

// TestReplayHammer releases many goroutines together sending the same
// request id: exactly one executes and answers ok; every other one is
// REPLAY_DETECTED (docs/protocol.md §3.3 step 8, §3.6).
func TestReplayHammer(t *testing.T) {
	const goroutines = 96
	e := newEnv(t)
	var execs atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay", Run: func(context.Context, *Call) (any, error) {
		execs.Add(1)
		return "paid", nil
	}})
	raw := mustJSON(e.invokeReq("pay", nil))
	outs := make([][]byte, goroutines)
	hammer.Run(goroutines, func(i int) {
		outs[i] = e.rt.Handle(context.Background(), raw)
	})
	counts := map[string]int{}
	for _, out := range outs {
		resp := decodeResponse(t, out)
		counts[outcome(t, resp)]++
		if !resp.OK {
			d, _ := resp.Error.Details["previous"].(map[string]any)
			if d == nil {
				t.Errorf("REPLAY_DETECTED without previous: %s", out)
			}
		}
	}
	want := map[string]int{"ok": 1, "protocol:REPLAY_DETECTED": goroutines - 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if execs.Load() != 1 {
		t.Errorf("executed %d times, want exactly once", execs.Load())
	}
	// After completion the details say how it ended.
	again := e.rt.Handle(context.Background(), raw)
	resp := decodeResponse(t, again)
	if resp.OK || resp.Error == nil {
		t.Fatalf("the same id after completion was not refused: %s", again)
	}
	want2 := map[string]any{"previous": map[string]any{"completed": true, "ok": true}}
	if diff := cmp.Diff(want2, resp.Error.Details); diff != "" {
		t.Errorf("replay details (-want +got):\n%s", diff)
	}
}

// TestMemoryReplayGuardHammer calls the built-in guard's Consume directly
// from several goroutines over many ids, in lockstep: every id is consumed
// exactly once. TestReplayHammer alone does not catch a guard that releases
// its lock between the check and the insert (its one id gives a window of
// nanoseconds: 0 failures in 2,000 runs); here, over 200,000 contended ids,
// with more Ps than CPUs so that a goroutine can be preempted inside the
// window, such a guard fails every run.
func TestMemoryReplayGuardHammer(t *testing.T) {
	const ids, workers, rounds = 50_000, 4, 4
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(max(4, goruntime.GOMAXPROCS(0))))
	keys := make([]string, ids)
	for i := range keys {
		keys[i] = "r" + strconv.Itoa(i)
	}
	for round := range rounds {
		g := NewMemoryReplayGuard(ids, 0)
		wins := make([]atomic.Int32, ids)
		hammer.Run(workers, func(int) {
			for j := range ids {
				if prev, err := g.Consume(context.Background(), "s", keys[j], 1<<40, 0); err == nil && prev == nil {
					wins[j].Add(1)
				}
			}
		})
		for j := range wins {
			if n := wins[j].Load(); n != 1 {
				t.Fatalf("round %d: id %s consumed %d times, want exactly once", round, keys[j], n)
			}
		}
	}
}

// A business failure is recorded with its code.
func TestReplayDetailsOfABusinessFailure(t *testing.T) {
	e := newEnv(t)
	req := e.invokeReq("missing", nil)
	e.send(req)
	resp, _ := e.send(req)
	want := &schema.SurfaceFailure{Code: "REPLAY_DETECTED", Message: resp.Error.Message,
		Details: map[string]any{"previous": map[string]any{"completed": true, "ok": true, "code": "ACTION_NOT_FOUND"}}}
	if diff := cmp.Diff(want, resp.Error); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

type failingGuard struct{}

func (failingGuard) Consume(context.Context, string, string, int64, int64) (*ReplayRecord, error) {
	return nil, errors.New("down")
}
func (failingGuard) Complete(context.Context, string, string, ReplayRecord) {}

func TestReplayGuardFailsClosed(t *testing.T) {
	var ran atomic.Int64
	e := newEnv(t, WithReplayGuard(failingGuard{}))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Run: counter(&ran, nil)})
	if got := outcome(t, first(e.invoke("a", nil))); got != "protocol:REPLAY_GUARD_UNAVAILABLE" || ran.Load() != 0 {
		t.Errorf("outcome %s, ran %d", got, ran.Load())
	}
	// The built-in guard when full fails closed too.
	e = newEnv(t, WithReplayGuard(NewMemoryReplayGuard(1, 0)))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
	e.invoke("a", nil)
	if got := outcome(t, first(e.invoke("a", nil))); got != "protocol:REPLAY_GUARD_UNAVAILABLE" {
		t.Errorf("full guard: %s", got)
	}
}

func TestSessions(t *testing.T) {
	now := int64(100_000)
	good := schema.SurfaceSession{Subject: "alice", Audience: "https://shop.example", Scope: []string{"cart.*"}, ExpiresAtMs: now + 1000}
	with := func(f func(s *schema.SurfaceSession)) schema.SurfaceSession { s := good; f(&s); return s }
	tokens := map[string]schema.SurfaceSession{
		"good":        good,
		"no-audience": with(func(s *schema.SurfaceSession) { s.Audience = "" }),
		"expired":     with(func(s *schema.SurfaceSession) { s.ExpiresAtMs = now }),
		"no-expiry":   with(func(s *schema.SurfaceSession) { s.ExpiresAtMs = 0 }),
		"revoked":     with(func(s *schema.SurfaceSession) { s.Revoked = true }),
		"revoked-and-expired": with(func(s *schema.SurfaceSession) {
			s.Revoked = true
			s.ExpiresAtMs = 1
		}),
		"not-yet":     with(func(s *schema.SurfaceSession) { s.NotBeforeMs = now + clockSkewMs + 1 }),
		"skew-ok":     with(func(s *schema.SurfaceSession) { s.NotBeforeMs = now + clockSkewMs }),
		"other-aud":   with(func(s *schema.SurfaceSession) { s.Audience = "https://evil.example" }),
		"wide-scope":  with(func(s *schema.SurfaceSession) { s.Scope = []string{"*"} }),
		"empty-scope": with(func(s *schema.SurfaceSession) { s.Scope = nil }),
	}
	verifier := SessionVerifierFunc(func(_ context.Context, token string, nowMs int64) (schema.SurfaceSession, error) {
		if nowMs != now {
			return schema.SurfaceSession{}, fmt.Errorf("verifier got now %d", nowMs)
		}
		switch token {
		case "verifier-expired":
			return schema.SurfaceSession{}, perr.New(perr.SessionExpired, "custom text", nil)
		case "verifier-revoked":
			return schema.SurfaceSession{}, fmt.Errorf("wrapped: %w", perr.New(perr.SessionRevoked, "", nil))
		case "verifier-broken":
			return schema.SurfaceSession{}, errors.New("key store unreachable")
		case "verifier-odd-code":
			return schema.SurfaceSession{}, perr.New(perr.PermissionDenied, "", nil)
		}
		s, ok := tokens[token]
		if !ok {
			return schema.SurfaceSession{}, perr.New(perr.SessionInvalid, "", nil)
		}
		return s, nil
	})
	tests := []struct {
		name     string
		required bool
		session  *string
		cap      string
		want     string
	}{
		{"required and absent", true, nil, "cart.add", "protocol:SESSION_REQUIRED"},
		{"optional and absent: anonymous, and a verifier: nothing exposed", false, nil, "cart.add", "protocol:CAPABILITY_NOT_EXPOSED"},
		{"anonymous does not reach what the site exposes", false, nil, "admin.wipe", "protocol:CAPABILITY_NOT_EXPOSED"},
		{"empty token", false, ptrS(""), "cart.add", "protocol:SESSION_INVALID"},
		{"unknown token", true, ptrS("nope"), "cart.add", "protocol:SESSION_INVALID"},
		{"good", true, ptrS("good"), "cart.add", "ok"},
		{"no audience in the session, with an origin set", true, ptrS("no-audience"), "cart.add", "protocol:SESSION_INVALID"},
		{"expired (at the expiry instant)", true, ptrS("expired"), "cart.add", "protocol:SESSION_EXPIRED"},
		{"no expiry", true, ptrS("no-expiry"), "cart.add", "protocol:SESSION_INVALID"},
		{"revoked", true, ptrS("revoked"), "cart.add", "protocol:SESSION_REVOKED"},
		{"revoked wins over expired", true, ptrS("revoked-and-expired"), "cart.add", "protocol:SESSION_REVOKED"},
		{"not valid yet", true, ptrS("not-yet"), "cart.add", "protocol:SESSION_INVALID"},
		{"not before within the clock skew", true, ptrS("skew-ok"), "cart.add", "ok"},
		{"audience mismatch", true, ptrS("other-aud"), "cart.add", "protocol:SESSION_INVALID"},
		{"verifier says expired", true, ptrS("verifier-expired"), "cart.add", "protocol:SESSION_EXPIRED"},
		{"verifier says revoked, wrapped", true, ptrS("verifier-revoked"), "cart.add", "protocol:SESSION_REVOKED"},
		{"verifier fails with a plain error", true, ptrS("verifier-broken"), "cart.add", "protocol:INTERNAL_ERROR"},
		{"verifier fails with a non-session code", true, ptrS("verifier-odd-code"), "cart.add", "protocol:INTERNAL_ERROR"},
		{"outside the session scope", true, ptrS("good"), "admin.wipe", "protocol:CAPABILITY_NOT_EXPOSED"},
		{"wide scope, but outside the site allowlist", true, ptrS("wide-scope"), "secret.x", "protocol:CAPABILITY_NOT_EXPOSED"},
		{"empty scope exposes nothing", true, ptrS("empty-scope"), "cart.add", "protocol:CAPABILITY_NOT_EXPOSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, WithExpose("cart.*", "admin.*"), WithSessions(verifier, tt.required), WithOrigin("https://shop.example"))
			e.clock.Advance(now)
			var ran atomic.Int64
			for _, id := range []string{"cart.add", "admin.wipe", "secret.x"} {
				mustDeclare(t, e.rt, Action{ID: id, Title: id, Run: counter(&ran, nil)})
			}
			req := e.invokeReq(tt.cap, nil)
			if tt.session != nil {
				req["session"] = *tt.session
			}
			resp, _ := e.send(req)
			if got := outcome(t, resp); got != tt.want {
				t.Fatalf("outcome %s, want %s", got, tt.want)
			}
			if (ran.Load() == 1) != (tt.want == "ok") {
				t.Errorf("handler ran %d times", ran.Load())
			}
			if !resp.OK {
				if *resp.ID != req["id"] {
					t.Errorf("id not echoed")
				}
				if strings.Contains(resp.Error.Message, "custom text") || strings.Contains(resp.Error.Message, "unreachable") {
					t.Errorf("the verifier's own text leaks: %q", resp.Error.Message)
				}
				// Steps 6–7 consume no id: the same id passes once the
				// session is fixed (a session failure is not a replay).
				if strings.HasPrefix(tt.want, "protocol:SESSION") {
					req["session"] = "good"
					req["capability"] = "cart.add"
					if got := outcome(t, first(e.send(req))); got != "ok" {
						t.Errorf("the same id with a good session: %s", got)
					}
				}
			}
		})
	}
}

func ptrS(s string) *string { return &s }

// describe lists exactly the site allowlist ∩ the session scope.
func TestExposureInDescribe(t *testing.T) {
	e := newEnv(t, WithExpose("cart.*", "*@order"), WithSessions(sessions(map[string]schema.SurfaceSession{
		"narrow": {Subject: "a", Scope: []string{"cart.add", "approve@*"}, ExpiresAtMs: 1 << 40},
		"wide":   {Subject: "b", Scope: []string{"*"}, ExpiresAtMs: 1 << 40},
	}), false))
	orderRecords(t, e.rt, 1)
	for _, a := range []Action{
		{ID: "cart.add", Title: "Add"}, {ID: "cart.clear", Title: "Clear"}, {ID: "admin.wipe", Title: "Wipe"},
		{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}},
		{ID: "ship", Title: "Ship", Record: &RecordRef{Kind: "order"}},
	} {
		mustDeclare(t, e.rt, a)
	}
	tests := []struct {
		session string
		want    []string
	}{
		{"", []string{}}, // anonymous: a verifier is configured (TestAnonymousExposure)
		{"wide", []string{"approve@order", "cart.add", "cart.clear", "ship@order"}},
		{"narrow", []string{"approve@order", "cart.add"}},
	}
	revs := map[string]bool{}
	for _, tt := range tests {
		t.Run("session "+tt.session, func(t *testing.T) {
			d := e.describe(tt.session)
			if diff := cmp.Diff(tt.want, capIDs(d)); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			revs[d.Revision] = true
		})
	}
	if len(revs) != 3 {
		t.Errorf("revisions %v: equal listings share a revision, different ones differ", revs)
	}
	// Without WithExpose nothing is exposed (fail closed).
	closed := New(WithClock(NewFakeClock(0)))
	mustDeclare(t, closed.rt(), Action{ID: "a", Title: "A"})
	out := closed.Handle(context.Background(), mustJSON(map[string]any{"protocol": schema.Protocol, "id": "r1", "method": "invoke", "capability": "a"}))
	if got := outcome(t, decodeResponse(t, out)); got != "protocol:CAPABILITY_NOT_EXPOSED" {
		t.Errorf("no allowlist: %s", got)
	}
}

func (rt *Runtime) rt() *Runtime { return rt }

func TestAuditOneEventPerRequest(t *testing.T) {
	e := newEnv(t, WithRateLimit(RateLimit{Invoke: Bucket{Burst: 4, PerSecond: 1}}))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
	mustDeclare(t, e.rt, Action{ID: "slow", Title: "Slow", Run: func(context.Context, *Call) (any, error) {
		e.clock.Advance(250)
		return nil, nil
	}})
	dup := e.invokeReq("a", nil)
	steps := []struct {
		name string
		raw  []byte
		want schema.SurfaceAuditEvent
	}{
		{"not JSON", []byte(`{"protocol":`), schema.SurfaceAuditEvent{Outcome: "protocol_error", Code: "INVALID_REQUEST"}},
		{"not an object", []byte(`[1]`), schema.SurfaceAuditEvent{Outcome: "protocol_error", Code: "INVALID_REQUEST"}},
		{"bad protocol", mustJSON(map[string]any{"protocol": "x/9", "id": "p1", "method": "describe"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("p1"), Outcome: "protocol_error", Code: "PROTOCOL_VERSION_UNSUPPORTED"}},
		{"bad id", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "a b", "method": "describe"}),
			schema.SurfaceAuditEvent{Outcome: "protocol_error", Code: "INVALID_REQUEST"}},
		{"unknown method", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "m1", "method": "delete"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("m1"), Outcome: "protocol_error", Code: "METHOD_NOT_SUPPORTED"}},
		{"describe", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "d1", "method": "describe"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("d1"), Method: "describe", Outcome: "ok"}},
		{"invoke ok", mustJSON(dup), schema.SurfaceAuditEvent{RequestID: ptrS(dup["id"].(string)), Method: "invoke", Capability: "a", Outcome: "ok"}},
		{"replay", mustJSON(dup), schema.SurfaceAuditEvent{RequestID: ptrS(dup["id"].(string)), Method: "invoke", Capability: "a",
			Outcome: "protocol_error", Code: "REPLAY_DETECTED"}},
		{"business error", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "b1", "method": "invoke", "capability": "zzz"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("b1"), Method: "invoke", Capability: "zzz", Outcome: "business_error", Code: "ACTION_NOT_FOUND"}},
		{"duration on the clock", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "s1", "method": "invoke", "capability": "slow"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("s1"), Method: "invoke", Capability: "slow", Outcome: "ok", DurationMs: 250, TimeMs: 250}},
		{"rate limited", mustJSON(map[string]any{"protocol": schema.Protocol, "id": "l1", "method": "invoke", "capability": "a"}),
			schema.SurfaceAuditEvent{RequestID: ptrS("l1"), Method: "invoke", Capability: "a", Outcome: "protocol_error", Code: "RATE_LIMITED", TimeMs: 250}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := len(e.audit.Events())
			e.rt.Handle(context.Background(), st.raw)
			evs := e.audit.Events()[before:]
			if len(evs) != 1 {
				t.Fatalf("%d audit events, want exactly 1: %+v", len(evs), evs)
			}
			if diff := cmp.Diff(st.want, evs[0]); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
	// handleValue and CallTool take the same path.
	before := len(e.audit.Events())
	e.rt.handleValue(context.Background(), []any{1})
	e.rt.handleValue(context.Background(), map[string]any{"protocol": schema.Protocol, "id": "v1", "method": "describe"})
	e.rt.callTool(context.Background(), "", "a", "{}")
	e.rt.callTool(context.Background(), "", "a", "not json") // INVALID_ARGS never reaches the gate
	if got := len(e.audit.Events()) - before; got != 3 {
		t.Errorf("handleValue×2 + CallTool×2 gave %d audit events, want 3", got)
	}
}

// TestSecretsNeverLeak puts a sentinel in every place a secret can come
// from and checks it appears in no audit event and no error response. It
// may appear in a success value: the handler chose to return it.
func TestSecretsNeverLeak(t *testing.T) {
	const sentinel = "SENTINEL9x7Qk2Zp"
	token := "tok." + sentinel
	e := newEnv(t, WithSessions(SessionVerifierFunc(func(_ context.Context, tok string, _ int64) (schema.SurfaceSession, error) {
		if tok != token {
			return schema.SurfaceSession{}, perr.New(perr.SessionInvalid, "bad token "+tok, nil)
		}
		return schema.SurfaceSession{Subject: "alice", Scope: []string{"*"}, ExpiresAtMs: 1 << 40}, nil
	}), true), WithLoop(LoopConfig{Repeats: 1}))
	params := map[string]Param{"password": {Type: "string"}, "token": {Type: "string"}, "note": {Type: "integer"}}
	mustDeclare(t, e.rt, Action{ID: "login", Title: "Log in", Params: params,
		Run: func(_ context.Context, c *Call) (any, error) {
			return nil, fmt.Errorf("login failed for %s: Bearer %s", c.Subject, sentinel)
		}})
	mustDeclare(t, e.rt, Action{ID: "strict", Title: "Strict", Params: map[string]Param{
		"password": {Type: "string", MaxLength: ptrI(3)}, "token": {Type: "string", Pattern: "^tok_"}, "n": {Type: "integer"}}})
	mustDeclare(t, e.rt, Action{ID: "echo", Title: "Echo", Params: params,
		Run: func(_ context.Context, c *Call) (any, error) { return map[string]any{"echo": c.Input["password"]}, nil }})
	mustDeclare(t, e.rt, Action{ID: "deny", Title: "Deny", Params: params,
		Run: func(context.Context, *Call) (any, error) {
			return nil, perr.New(perr.PermissionDenied, "no", map[string]any{"password": sentinel, "authorization": "Bearer " + sentinel})
		}})
	mustDeclare(t, e.rt, Action{ID: "steps", Title: "Steps", Params: params, Steps: []Step{{Run: func(context.Context, *Call) (any, error) {
		return nil, errors.New("step failed: password=" + sentinel)
	}}}})

	secretInput := map[string]any{"password": sentinel, "token": sentinel}
	type sent struct {
		req     map[string]any
		valueOK bool // a success value may echo the secret
	}
	var reqs []sent
	add := func(cap string, input map[string]any, tok string, valueOK bool) {
		req := e.invokeReq(cap, input)
		if tok != "" {
			req["session"] = tok
		}
		reqs = append(reqs, sent{req: req, valueOK: valueOK})
	}
	add("login", secretInput, token, false)                                                             // handler error with a Bearer credential
	add("login", map[string]any{"password": sentinel, "token": sentinel, "note": "x"}, token, false)    // INVALID_PARAMS
	add("strict", map[string]any{"password": sentinel, "token": sentinel, "n": sentinel}, token, false) // INVALID_PARAMS on every field
	add("echo", secretInput, token, true)                                                               // success value: allowed
	add("echo", secretInput, token, false)                                                              // LOOP_DETECTED
	add("deny", secretInput, token, false)                                                              // handler's own Action code with details
	add("steps", secretInput, token, false)                                                             // STEP_FAILED cause
	add("login", secretInput, "wrong."+sentinel, false)                                                 // SESSION_INVALID
	add("nope", secretInput, token, false)                                                              // ACTION_NOT_FOUND
	add("login", secretInput, "", false)                                                                // SESSION_REQUIRED
	reqs = append(reqs, sent{req: map[string]any{"protocol": schema.Protocol, "id": "d1", "method": "describe", "session": token}})

	want := []string{"EXECUTION_FAILED", "INVALID_PARAMS", "INVALID_PARAMS", "ok", "LOOP_DETECTED", "PERMISSION_DENIED",
		"STEP_FAILED", "protocol:SESSION_INVALID", "ACTION_NOT_FOUND", "protocol:SESSION_REQUIRED", "ok"}
	for i, s := range reqs {
		resp, out := e.send(s.req)
		if got := outcome(t, resp); got != want[i] {
			t.Errorf("request %d (%v): outcome %s, want %s", i, s.req["capability"], got, want[i])
		}
		if s.valueOK {
			if !strings.Contains(string(out), sentinel) {
				t.Errorf("request %d: the echo does not return the secret; the test proves nothing", i)
			}
			vb, _ := json.Marshal(invokeResult(t, resp).Value)
			if strings.Count(string(out), sentinel) != strings.Count(string(vb), sentinel) {
				t.Errorf("request %d: the secret is outside the value: %s", i, out)
			}
			continue
		}
		if strings.Contains(string(out), sentinel) {
			t.Errorf("request %d: the secret is in the response: %s", i, out)
		}
	}
	evs, _ := json.Marshal(e.audit.Events())
	if strings.Contains(string(evs), sentinel) {
		t.Errorf("the secret is in the audit events: %s", evs)
	}
	if n := len(e.audit.Events()); n != len(reqs) {
		t.Errorf("%d audit events for %d requests", n, len(reqs))
	}
}

// MemoryAudit keeps at most max events, always the newest ones, in order.
func TestMemoryAudit(t *testing.T) {
	for _, limit := range []int{1, 2, 3, 4, 10} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			m := NewMemoryAudit(limit)
			for i := 1; i <= 25; i++ {
				m.Record(schema.SurfaceAuditEvent{TimeMs: int64(i)})
				evs := m.Events()
				if len(evs) > limit || len(evs) < min(i, max(limit/2, 1)) {
					t.Fatalf("after %d events: %d kept, max %d", i, len(evs), limit)
				}
				for j, ev := range evs {
					if want := int64(i - len(evs) + 1 + j); ev.TimeMs != want {
						t.Fatalf("after %d events: kept %v, want the newest in order", i, evs)
					}
				}
			}
			evs := m.Events()
			evs[0].TimeMs = -1
			if m.Events()[0].TimeMs == -1 {
				t.Errorf("Events returns the internal slice")
			}
		})
	}
}
