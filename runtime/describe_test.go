package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/schema"
)

func limits(edit func(l *Limits)) Option {
	l := DefaultLimits()
	edit(&l)
	return WithLimits(l)
}

// Everything a description holds is bounded and says when it was cut
// (docs/protocol.md §3.4).
func TestDescribeBounds(t *testing.T) {
	t.Run("capabilities", func(t *testing.T) {
		e := newEnv(t, limits(func(l *Limits) { l.MaxCapabilities = 2 }))
		full := newEnv(t)
		for i := range 5 {
			mustDeclare(t, e.rt, Action{ID: fmt.Sprintf("a%d", i), Title: "A"})
			mustDeclare(t, full.rt, Action{ID: fmt.Sprintf("a%d", i), Title: "A"})
		}
		d := e.describe("")
		if diff := cmp.Diff([]string{"a0", "a1"}, capIDs(d)); diff != "" {
			t.Errorf("capabilities (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(&schema.Truncation{Reasons: []string{"capabilities"}, OmittedCapabilities: 3}, d.Truncated); diff != "" {
			t.Errorf("truncated (-want +got):\n%s", diff)
		}
		if rev := full.describe("").Revision; d.Revision != rev {
			t.Errorf("revision %s, want %s: it is computed over the whole listing, before truncation", d.Revision, rev)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		const max = 4096
		e := newEnv(t, limits(func(l *Limits) { l.MaxBytes = max }))
		for i := range 20 {
			mustDeclare(t, e.rt, Action{ID: fmt.Sprintf("a%02d", i), Title: "A", Description: strings.Repeat("d", 500)})
		}
		req := e.describeReq()
		resp, _ := e.send(req)
		if len(resp.Result) > max {
			t.Errorf("description is %d bytes, over MaxBytes %d", len(resp.Result), max)
		}
		var d schema.SurfaceDescription
		json.Unmarshal(resp.Result, &d)
		if d.Truncated == nil || !cmp.Equal(d.Truncated.Reasons, []string{"bytes"}) || d.Truncated.OmittedCapabilities != 20-len(d.Capabilities) {
			t.Errorf("truncated = %+v with %d listed", d.Truncated, len(d.Capabilities))
		}
		if len(d.Capabilities) == 0 {
			t.Errorf("nothing listed")
		}
	})
	t.Run("a large context stays within MaxBytes", func(t *testing.T) {
		const max = 4096
		e := newEnv(t, limits(func(l *Limits) { l.MaxBytes = max }))
		for i := range 20 {
			v := strings.Repeat("v", 900)
			e.rt.DeclareState(State{Key: fmt.Sprintf("s%02d", i), Read: func(context.Context) (any, error) { return v, nil }})
		}
		mustDeclare(t, e.rt, Action{ID: "a", Title: "A"})
		resp, _ := e.send(e.describeReq())
		if len(resp.Result) > max {
			t.Errorf("BUG: describe.go describe: the context is bounded only by counts (MaxStates × MaxStateBytes, every record kind, …), "+
				"never by MaxBytes, so a description of %d bytes exceeds MaxBytes %d without saying so", len(resp.Result), max)
		}
	})
	t.Run("state values", func(t *testing.T) {
		e := newEnv(t, limits(func(l *Limits) { l.MaxStateBytes = 20; l.MaxStates = 2 }))
		e.rt.DeclareState(State{Key: "a.big", Read: func(context.Context) (any, error) { return strings.Repeat("x", 50), nil }})
		e.rt.DeclareState(State{Key: "b.small", Read: func(context.Context) (any, error) { return 1, nil }})
		e.rt.DeclareState(State{Key: "c.third", Read: func(context.Context) (any, error) { return 3, nil }})
		e.rt.DeclareState(State{Key: "0.err", Read: func(context.Context) (any, error) { return nil, fmt.Errorf("x") }})
		d := e.describe("")
		want := map[string]any{"0.err": nil, "a.big": map[string]any{"$truncated": true, "bytes": float64(52)}}
		if diff := cmp.Diff(want, d.Context.States); diff != "" {
			t.Errorf("states (-want +got):\n%s", diff)
		}
		if d.Truncated == nil || !cmp.Equal(d.Truncated.Reasons, []string{"states"}) {
			t.Errorf("truncated = %+v", d.Truncated)
		}
	})
	t.Run("text and lists", func(t *testing.T) {
		long := strings.Repeat("é", 50)
		e := newEnv(t, limits(func(l *Limits) {
			l.MaxTextLen = 10
			l.MaxFeedback = 1
			l.MaxGuides = 1
			l.MaxRegions = 1
			l.MaxUnavailable = 1
		}), WithPage(func(context.Context) (schema.PageInfo, []schema.Feedback) {
			return schema.PageInfo{URL: "https://x.example/", Title: long},
				[]schema.Feedback{{Level: "error", Message: long}, {Level: "info", Message: "second"}}
		}))
		e.rt.DeclareGuide(Guide{Target: "g1", Label: "one"})
		e.rt.DeclareGuide(Guide{Target: "g2", Label: "two"})
		e.rt.DeclareRegion(Region{ID: "r1"})
		e.rt.DeclareRegion(Region{ID: "r2"})
		e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
			return []RecordItem{{ID: "o1", Label: long}}, nil
		}})
		mustDeclare(t, e.rt, Action{ID: "u1", Title: "U", Available: func(context.Context, string) Availability { return Unavailable(long) }})
		mustDeclare(t, e.rt, Action{ID: "u2", Title: "U", Available: func(context.Context, string) Availability { return Unavailable("no") }})
		d := e.describe("")
		cut10 := strings.Repeat("é", 9) + "…"
		want := schema.SurfaceContext{
			Page:        &schema.PageInfo{URL: "https://x.example/", Title: cut10},
			Regions:     []schema.Region{{ID: "r1", Active: true}},
			Records:     map[string]schema.RecordSet{"order": {Total: 1, Items: []schema.RecordItem{{ID: "o1", Label: cut10}}}},
			Feedback:    []schema.Feedback{{Level: "error", Message: cut10}},
			Unavailable: []schema.Unavailable{{ID: "u1", Reason: cut10, InputSchema: &schema.JSONSchema{Type: "object", AdditionalProperties: new(false)}, Title: "U", Risk: "write"}},
			Guides:      []schema.Guide{{Target: "g1", Label: "one"}},
		}
		if diff := cmp.Diff(want, d.Context); diff != "" {
			t.Errorf("context (-want +got):\n%s", diff)
		}
		if d.Truncated == nil || !cmp.Equal(d.Truncated.Reasons, []string{"regions", "feedback", "unavailable", "guides"}) {
			t.Errorf("truncated = %+v", d.Truncated)
		}
	})
	t.Run("records", func(t *testing.T) {
		e := newEnv(t, limits(func(l *Limits) { l.MaxRecordIDs = 2 }))
		orderRecords(t, e.rt, 4, 1)
		d := e.describe("")
		want := schema.RecordSet{Total: 4, Truncated: true, Items: []schema.RecordItem{{ID: "ord_2", Label: "#1002"}, {ID: "ord_3", Label: "#1003"}}}
		if diff := cmp.Diff(want, d.Context.Records["order"]); diff != "" {
			t.Errorf("records: visible first, bounded (-want +got):\n%s", diff)
		}
	})
}

// The describe cache reuses its bytes only while nothing changed: a record
// or state change shows in the next description.
func TestDescribeCacheFreshness(t *testing.T) {
	e := newEnv(t)
	n := newVar(2)
	e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
		var rs []RecordItem
		for i := 1; i <= n.get().(int); i++ {
			rs = append(rs, RecordItem{ID: fmt.Sprintf("ord_%d", i)})
		}
		return rs, nil
	}})
	avail := atomic.Bool{}
	avail.Store(true)
	mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}})
	mustDeclare(t, e.rt, Action{ID: "buy", Title: "Buy", Available: func(context.Context, string) Availability {
		if avail.Load() {
			return Available
		}
		return Unavailable("sold out")
	}})
	d1 := e.describe("")
	n.set(3)
	d2 := e.describe("")
	if got := d2.Capabilities[0].Record.Visible; !cmp.Equal(got, []string{"ord_1", "ord_2", "ord_3"}) {
		t.Errorf("a new record is not described: %v", got)
	}
	if d1.Revision != d2.Revision {
		t.Errorf("a new row changed the revision (the listed set is the same)")
	}
	avail.Store(false)
	d3 := e.describe("")
	if capByID(d3, "buy") != nil || d3.Revision == d2.Revision {
		t.Errorf("an action that became unavailable is still listed, or the revision stayed: %v %s", capIDs(d3), d3.Revision)
	}
	avail.Store(true)
	if d4 := e.describe(""); d4.Revision != d2.Revision {
		t.Errorf("the same listing again has another revision: %s vs %s", d4.Revision, d2.Revision)
	}
}

// The check order of docs/protocol.md §3.3 through Handle: each case fails two
// steps and expects the earlier one; steps 1–9 never run page code.
func TestCheckOrder(t *testing.T) {
	var pageCalls atomic.Int64
	verifier := sessions(map[string]schema.SurfaceSession{"good": {Subject: "a", Scope: []string{"open.*"}, ExpiresAtMs: 1 << 40}})
	e := newEnv(t, WithExpose("open.*"), WithSessions(verifier, false),
		WithRateLimit(RateLimit{Invoke: Bucket{Burst: 1, PerSecond: 1}, Describe: Bucket{Burst: 100, PerSecond: 1}}))
	for _, id := range []string{"open.a", "closed.b"} {
		mustDeclare(t, e.rt, Action{ID: id, Title: id,
			Available: func(context.Context, string) Availability { pageCalls.Add(1); return Available },
			Run:       func(context.Context, *Call) (any, error) { pageCalls.Add(1); return nil, nil }})
	}
	e.rt.DeclareState(State{Key: "s", Read: func(context.Context) (any, error) { pageCalls.Add(1); return 1, nil }})

	steps := []struct {
		name string
		req  map[string]any
		raw  string
		want string
	}{
		{"not an object: id null", nil, `"x"`, "protocol:INVALID_REQUEST"},
		{"an unknown critical field", map[string]any{"protocol": schema.Protocol, "id": "c1", "method": "invoke", "capability": "open.a", "critical": []any{"budget"}}, "",
			"protocol:INVALID_REQUEST"},
		{"a bad session before the rate limit", map[string]any{"protocol": schema.Protocol, "id": "s1", "method": "invoke", "capability": "closed.b", "session": "bad"}, "",
			"protocol:SESSION_INVALID"},
		{"exposure is checked after the replay guard consumes", map[string]any{"protocol": schema.Protocol, "id": "x1", "method": "invoke", "capability": "closed.b", "session": "good"}, "",
			"protocol:CAPABILITY_NOT_EXPOSED"},
		{"rate limit before the replay guard", map[string]any{"protocol": schema.Protocol, "id": "x1", "method": "invoke", "capability": "closed.b", "session": "good"}, "",
			"protocol:RATE_LIMITED"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			raw := []byte(st.raw)
			if st.req != nil {
				raw = mustJSON(st.req)
			}
			resp, out := e.sendRaw(raw)
			if got := outcome(t, resp); got != st.want {
				t.Errorf("outcome %s, want %s: %s", got, st.want, out)
			}
			if st.req == nil && resp.ID != nil {
				t.Errorf("id = %q, want null", *resp.ID)
			}
		})
	}
	e.clock.Advance(1000)
	if resp, _ := e.send(map[string]any{"protocol": schema.Protocol, "id": "x1", "method": "invoke", "capability": "closed.b", "session": "good"}); outcome(t, resp) != "protocol:REPLAY_DETECTED" {
		t.Errorf("the id refused at step 9 was consumed: %+v", resp.Error)
	}
	if pageCalls.Load() != 0 {
		t.Errorf("steps 1–9 ran page code %d times", pageCalls.Load())
	}
}

// The revision an invoke reports is cached per generation only where the
// listing asks no page code; where an Available or a region's Active
// check is declared it follows them within one generation, and a new
// declaration changes it either way.
func TestRevisionOfFollowsPageChecks(t *testing.T) {
	ctx := context.Background()
	var open, active atomic.Bool
	open.Store(true)
	active.Store(true)
	exp := &patternExposure{site: []string{"*"}, scope: []string{"*"}}
	tests := []struct {
		name   string
		decl   func(rt *Runtime)
		toggle func()
		same   bool // the revision stays after toggle
	}{
		{"static", func(rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "a", Title: "A"})
		}, func() { open.Store(!open.Load()) }, true},
		{"available", func(rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "a", Title: "A", Available: func(context.Context, string) Availability {
				if open.Load() {
					return Available
				}
				return Unavailable("closed")
			}})
		}, func() { open.Store(!open.Load()) }, false},
		{"region", func(rt *Runtime) {
			if _, err := rt.DeclareRegion(Region{ID: "r", Title: "R", Active: func(context.Context) bool { return active.Load() }}); err != nil {
				t.Fatal(err)
			}
			mustDeclare(t, rt, Action{ID: "a", Title: "A", Region: "r"})
		}, func() { active.Store(!active.Load()) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := newEnv(t).rt
			tc.decl(rt)
			r1 := rt.revisionOf(ctx, exp)
			if r := rt.revisionOf(ctx, exp); r != r1 {
				t.Fatalf("revision changed with nothing changed: %s, then %s", r1, r)
			}
			tc.toggle()
			r2 := rt.revisionOf(ctx, exp)
			tc.toggle()
			if got := r2 == r1; got != tc.same {
				t.Errorf("after the toggle: same revision %v, want %v (%s, %s)", got, tc.same, r1, r2)
			}
			if r := rt.revisionOf(ctx, exp); r != r1 {
				t.Errorf("toggled back: revision %s, want %s", r, r1)
			}
			mustDeclare(t, rt, Action{ID: "b", Title: "B"})
			if r := rt.revisionOf(ctx, exp); r == r1 {
				t.Errorf("a new declaration left the revision at %s", r)
			}
		})
	}
}
