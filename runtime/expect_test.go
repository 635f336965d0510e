package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

func TestExpectationPolling(t *testing.T) {
	tests := []struct {
		name      string
		timeoutMs int64
		want      string
		nowMs     int64
	}{
		{"met within the bound", 1000, "ok", 300},
		{"not met within the bound", 100, string(perr.ExpectationFailed), 100},
		{"met exactly at the bound", 300, "ok", 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			count := newVar(0)
			e.rt.DeclareState(count.state("cart.count"))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "cart.add", Title: "Add",
				Expect: &Expectation{State: "cart.count", Change: "increase", TimeoutMs: tt.timeoutMs},
				Run: func(context.Context, *Call) (any, error) {
					ran.Add(1)
					e.clock.AfterFunc(300, func() { count.add(1) }) // the page updates later
					return nil, nil
				}})
			_, res := e.invoke("cart.add", nil)
			got := wantOutcome(t, res, tt.want)
			if now := e.clock.NowMs(); now != tt.nowMs {
				t.Errorf("clock at %d ms after the invoke, want %d", now, tt.nowMs)
			}
			if ran.Load() != 1 {
				t.Errorf("handler ran %d times", ran.Load())
			}
			if got == "ok" {
				want := []schema.ExpectationResult{{State: "cart.count", Condition: "increase", Before: num("0"), After: num("1"), Met: true}}
				if diff := cmp.Diff(want, res.Evidence.Expectations); diff != "" {
					t.Errorf("expectations (-want +got):\n%s", diff)
				}
				return
			}
			want := &schema.ActionFailure{Code: string(perr.ExpectationFailed),
				Message: fmt.Sprintf("Expected cart.count to increase; it did not within %d ms", tt.timeoutMs),
				Details: map[string]any{"expectation": map[string]any{"state": "cart.count", "condition": "increase", "before": num("0"), "after": num("0"), "met": false}}}
			if diff := cmp.Diff(want, res.Error); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
		})
	}
}

// The runtime's default bound applies when the expectation has none.
func TestExpectationDefaultTimeout(t *testing.T) {
	e := newEnv(t, WithExpectTimeout(250*time.Millisecond, 10*time.Millisecond))
	e.rt.DeclareState(newVar(0).state("s"))
	mustDeclare(t, e.rt, Action{ID: "a", Title: "A", Expect: &Expectation{State: "s", Change: "any"}})
	_, res := e.invoke("a", nil)
	if res.Error == nil || !strings.Contains(res.Error.Message, "within 250 ms") {
		t.Errorf("result = %+v", res.Error)
	}
	if now := e.clock.NowMs(); now != 250 {
		t.Errorf("clock at %d", now)
	}
}

func TestExpectationMet(t *testing.T) {
	tests := []struct {
		name          string
		e             Expectation
		before, after any
		want          bool
		cond          string
	}{
		{"increase", Expectation{Change: "increase"}, num("1"), num("2"), true, "increase"},
		{"increase not met", Expectation{Change: "increase"}, 2, 2, false, "increase"},
		{"increase across number kinds", Expectation{Change: "increase"}, 1, num("1.5"), true, "increase"},
		{"increase int64", Expectation{Change: "increase"}, int64(1), int64(2), true, "increase"},
		{"increase int32", Expectation{Change: "increase"}, int32(1), int32(2), true, "increase"},
		{"increase uint", Expectation{Change: "increase"}, uint(1), uint(2), true, "increase"},
		{"increase float32", Expectation{Change: "increase"}, float32(1), float32(2), true, "increase"},
		{"increase from null", Expectation{Change: "increase"}, nil, 1, false, "increase"},
		{"increase of strings", Expectation{Change: "increase"}, "1", "2", false, "increase"},
		{"decrease", Expectation{Change: "decrease"}, 2.5, 1, true, "decrease"},
		{"any", Expectation{Change: "any"}, "a", "b", true, "change"},
		{"any: 1 and 1.0 are the same", Expectation{Change: "any"}, 1, num("1.0"), false, "change"},
		{"any: object key order does not matter", Expectation{Change: "any"}, map[string]any{"a": 1, "b": 2}, map[string]any{"b": 2, "a": 1}, false, "change"},
		{"equals", Expectation{HasEquals: true, Equals: "paid"}, "new", "paid", true, `equal "paid"`},
		{"equals null", Expectation{HasEquals: true}, 1, nil, true, "equal null"},
		{"equals not met", Expectation{HasEquals: true, Equals: 3}, 1, 2, false, "equal 3"},
		{"equals and increase", Expectation{HasEquals: true, Equals: 3, Change: "increase"}, 1, num("3"), true, "increase to 3"},
		{"equals and increase, equal but not increased", Expectation{HasEquals: true, Equals: 3, Change: "increase"}, 3, 3, false, "increase to 3"},
		{"predicate", Expectation{Predicate: func(b, a any) bool { return b == "x" && a == "y" }}, "x", "y", true, "predicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.met(tt.before, tt.after); got != tt.want {
				msg := ""
				if strings.Contains(tt.name, "int32") || strings.Contains(tt.name, "uint") || strings.Contains(tt.name, "float32") {
					msg = "BUG: expect.go met → jsontree.Number knows only json.Number, float64, int and int64; a state reader " +
						"returning another Go number kind never increases/decreases. "
				}
				t.Errorf("%smet(%v, %v) = %v, want %v", msg, tt.before, tt.after, got, tt.want)
			}
			if got := tt.e.condition(); got != tt.cond {
				t.Errorf("condition() = %q, want %q", got, tt.cond)
			}
		})
	}
}
