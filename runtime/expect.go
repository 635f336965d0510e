package runtime

import (
	"context"
	"fmt"

	"github.com/pling-go/pling/internal/jsontree"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

// met decides an expectation from the values before and after.
func (e *Expectation) met(before, after any) bool {
	if e.Predicate != nil {
		return e.Predicate(before, after)
	}
	if e.HasEquals && !jsonEqual(after, e.Equals) {
		return false
	}
	switch e.Change {
	case "increase", "decrease":
		b, ok1 := jsontree.Number(before)
		a, ok2 := jsontree.Number(after)
		if !ok1 || !ok2 {
			return false
		}
		if e.Change == "increase" {
			return a > b
		}
		return a < b
	case "any":
		return !jsonEqual(before, after)
	}
	return true
}

func (e *Expectation) condition() string {
	switch {
	case e.Predicate != nil:
		return "predicate"
	case e.HasEquals && e.Change != "":
		b, _ := canon.Marshal(e.Equals)
		return changeVerb(e.Change) + " to " + string(b)
	case e.HasEquals:
		b, _ := canon.Marshal(e.Equals)
		return "equal " + string(b)
	}
	return changeVerb(e.Change)
}

func changeVerb(c string) string {
	if c == "any" {
		return "change"
	}
	return c
}

func jsonEqual(a, b any) bool {
	x, err1 := canon.Marshal(a)
	y, err2 := canon.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// observe polls the expectation's state after the run until it is met or
// the bound passes (pages update asynchronously). before is the value read
// before the run.
func (rt *Runtime) observe(ctx context.Context, snap *snapshot, e *Expectation, before any) schema.ExpectationResult {
	timeout := rt.expectTimeout(e)
	c := rt.cfg.clock
	deadline := c.NowMs() + timeout
	res := schema.ExpectationResult{State: e.State, Condition: e.condition(), Before: before}
	for {
		after, err := rt.readStateKey(ctx, snap, e.State)
		if err == nil {
			res.After = after
			if e.met(before, after) {
				res.Met = true
				return res
			}
		}
		now := c.NowMs()
		if now >= deadline || ctx.Err() != nil {
			return res
		}
		step := min(rt.cfg.expectPollMs, deadline-now)
		if c.Sleep(ctx, step) != nil {
			return res
		}
	}
}

// readStateKey reads one state of the snapshot by key.
func (rt *Runtime) readStateKey(ctx context.Context, snap *snapshot, key string) (any, error) {
	// The snapshot may be older than a declaration made by the handler;
	// read the live registry.
	rt.reg.mu.RLock()
	sl := rt.reg.states[key]
	var s State
	ok := sl != nil && len(sl.insts) > 0 && !sl.conflict()
	if ok {
		s = sl.current()
	}
	rt.reg.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no state %q", key)
	}
	return readState(ctx, s)
}

func (rt *Runtime) expectTimeout(e *Expectation) int64 {
	if e.TimeoutMs > 0 {
		return e.TimeoutMs
	}
	return rt.cfg.expectTimeoutMs
}
