package runtime

import (
	"context"
	"strings"
	"testing"
)

// TestLint: the mistakes no single declaration shows are each reported
// once, naming the declaration and the fix; a clean page reports none.
func TestLint(t *testing.T) {
	run := func(context.Context, *Call) (any, error) { return true, nil }
	throws := func(context.Context, string) Availability { panic("byId(undefined).status") }
	tests := []struct {
		name    string
		opts    []Option
		declare func(t *testing.T, rt *Runtime)
		want    []string // substrings, one line each, in order
	}{
		{"clean", []Option{WithExpose("*")}, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "a", Run: run, Expect: &Expectation{State: "count", Change: "any"}})
			if _, err := rt.DeclareState(State{Key: "count", Read: func(context.Context) (any, error) { return 1, nil }}); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"expect.state names no declared state", []Option{WithExpose("*")}, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "board.add", Run: run, Expect: &Expectation{State: "board.count", Change: "increase"}})
		}, []string{`action "board.add": expect.state names the state "board.count", which is not declared`}},
		{"a step's expect.state", []Option{WithExpose("*")}, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "book", Steps: []Step{{Run: run}, {Run: run, Expect: &Expectation{State: "slot", Change: "any"}}}})
		}, []string{`action "book": steps[1].expect.state names the state "slot"`}},
		{"an availability check that throws", []Option{WithExpose("*")}, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "close", Run: run, Available: throws})
		}, []string{`action "close": its availability check throws`}},
		{"a row check that throws for every row", []Option{WithExpose("*")}, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "close", Record: &RecordRef{Kind: "ticket"}, Run: run, Available: throws})
		}, []string{`action "close@ticket": its availability check throws for every known row`}},
		{"nothing exposed", nil, func(t *testing.T, rt *Runtime) {
			mustDeclare(t, rt, Action{ID: "a", Run: run})
		}, []string{`1 action(s) are declared but the site allowlist is empty`, `data-expose="*"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := New(tt.opts...)
			tt.declare(t, rt)
			got := rt.lint(context.Background())
			if len(tt.want) == 0 {
				if len(got) != 0 {
					t.Errorf("lint = %q, want nothing", got)
				}
				return
			}
			all := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("lint = %q, want a line with %q", got, w)
				}
			}
			if tt.name != "nothing exposed" && len(got) != len(tt.want) {
				t.Errorf("lint = %q, want %d line(s)", got, len(tt.want))
			}
		})
	}
}
