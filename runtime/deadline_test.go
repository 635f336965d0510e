package runtime

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// TestHandlerDeadline: a handler that never settles is answered, once the
// clock passes its deadline (the action's timeoutMs, else the default),
// with EXECUTION_FAILED saying it did not finish and its effect is
// unknown, and the page's author is warned; a handler that finishes in
// time is untouched. The clock is fake: the deadline passes only when the
// test moves it.
func TestHandlerDeadline(t *testing.T) {
	tests := []struct {
		name      string
		timeoutMs int64 // the action's; 0: the default
		advance   int64 // how far the test moves the clock once the handler runs
		wantMs    int64
	}{
		{"the page's default", 0, 20_000, 20_000},
		{"the action's own timeoutMs", 500, 500, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warned []string
			e := newEnv(t, withAuthorWarning(func(m string) { warned = append(warned, m) }), WithHandlerTimeout(20*time.Second))
			started, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			mustDeclare(t, e.rt, Action{ID: "board.save", Title: "Save", TimeoutMs: tt.timeoutMs,
				Run: func(ctx context.Context, c *Call) (any, error) {
					close(started)
					<-release // never settles while the invoke waits
					return true, nil
				}})
			before := e.clock.pending()
			go func() {
				<-started
				// The handler starts before the invoke sets its deadline
				// on the clock: moving the clock before that would leave
				// the deadline ahead of it for ever.
				for e.clock.pending() == before {
					time.Sleep(time.Millisecond)
				}
				e.clock.Advance(tt.advance - 1)
				e.clock.Advance(1)
			}()
			resp, res := e.invoke("board.save", nil)
			if !resp.OK || res.Error == nil {
				t.Fatalf("response %+v, want a business failure", resp)
			}
			want := &schema.ActionFailure{Code: string(perr.ExecutionFailed),
				Details: map[string]any{"timeoutMs": json.Number(strconv.FormatInt(tt.wantMs, 10)), "finished": false}}
			got := &schema.ActionFailure{Code: res.Error.Code, Details: res.Error.Details}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.Error.Message, "did not finish") || !strings.Contains(res.Error.Message, "unknown") {
				t.Errorf("message %q does not say the handler did not finish and its effect is unknown", res.Error.Message)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], `"board.save"`) || !strings.Contains(warned[0], "timeoutMs") {
				t.Errorf("author warnings %q, want one naming board.save and timeoutMs", warned)
			}
		})
	}
	t.Run("a handler that finishes in time", func(t *testing.T) {
		var warned []string
		e := newEnv(t, withAuthorWarning(func(m string) { warned = append(warned, m) }))
		mustDeclare(t, e.rt, Action{ID: "board.save", Title: "Save", TimeoutMs: 1,
			Run: func(ctx context.Context, c *Call) (any, error) { return "saved", nil }})
		if _, res := e.invoke("board.save", nil); res.Error != nil {
			t.Errorf("error %+v, want the value", res.Error)
		}
		if len(warned) != 0 {
			t.Errorf("warned %q", warned)
		}
	})
}
