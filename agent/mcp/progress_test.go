package mcp_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// approveLater is a person who approves every challenge after a moment.
type approveLater struct{ after time.Duration }

func (a approveLater) Approve(ctx context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision, 1)
	go func() {
		select {
		case <-time.After(a.after):
			out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true}
		case <-ctx.Done():
		}
	}()
	return out
}

// TestProgressWhileAPersonIsAsked: a tools/call with a progressToken gets
// notifications/progress when the page asks a person, before the result,
// so a host knows the call is not stuck; a call without a token gets none.
func TestProgressWhileAPersonIsAsked(t *testing.T) {
	// The system clock: a fake one would expire the approval at once.
	p := newPage(t, runtime.WithClock(runtime.SystemClock{}), runtime.WithApprover(approveLater{200 * time.Millisecond}, 90*time.Second))
	if _, err := p.rt.DeclareAction(runtime.Action{ID: "order.refund", Title: "Refund", Approval: true, Risk: schema.RiskDestructive,
		Run: func(context.Context, *runtime.Call) (any, error) { return "refunded", nil }}); err != nil {
		t.Fatal(err)
	}
	b := runtimeBridge(p.rt)
	_, _ = b.Refresh(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	ss, err := b.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })

	tests := []struct {
		name  string
		token any
		want  []string // the messages of the notifications, in order
	}{
		{name: "with a progress token", token: "refund-1",
			want: []string{"Waiting for a person to approve order.refund (up to 1m30s)"}},
		{name: "without a progress token", token: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			params := &sdk.CallToolParams{Name: "order_refund"}
			if tt.token != nil {
				params.SetProgressToken(tt.token)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			time.Sleep(50 * time.Millisecond) // notifications are delivered asynchronously
			mu.Lock()
			defer mu.Unlock()
			var msgs []string
			for _, n := range got {
				if n.ProgressToken != tt.token {
					t.Errorf("progress token %v, want %v", n.ProgressToken, tt.token)
				}
				msgs = append(msgs, n.Message)
			}
			if strings.Join(msgs, "|") != strings.Join(tt.want, "|") {
				t.Errorf("progress messages %q, want %q", msgs, tt.want)
			}
		})
	}
}

// TestWatchLogsAFailureOnce: a page that cannot be described (a dead
// browser) is logged once per run of failures, not at every poll.
func TestWatchLogsAFailureOnce(t *testing.T) {
	p := newPage(t)
	var fail atomic.Bool
	var failed atomic.Int32 // describes refused while failing
	tr := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
		if fail.Load() {
			failed.Add(1)
			return nil, errors.New("the browser is gone")
		}
		return agent.InProcess(p.rt).RoundTrip(ctx, raw)
	})
	var logs syncbuf.Buffer
	b := plingmcp.NewBridge(agent.New(tr), plingmcp.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if _, err := b.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { b.Watch(ctx, 5*time.Millisecond); close(stopped) }()
	// waitFor polls (bounded) until cond holds; it fails the test
	// otherwise, so a slow machine waits longer instead of failing.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s:\n%s", what, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	fail.Store(true)
	waitFor("20 failed describes", func() bool { return failed.Load() >= 20 })
	fail.Store(false)
	waitFor("the recovery logged", func() bool { return strings.Contains(logs.String(), "describe works again") })
	cancel()
	<-stopped
	got := logs.String()
	if n := strings.Count(got, "describe failed"); n != 1 {
		t.Errorf("%d describe failures logged, want 1:\n%s", n, got)
	}
	if n := strings.Count(got, "describe works again"); n != 1 {
		t.Errorf("%d recoveries logged, want 1:\n%s", n, got)
	}
}

// neverAnswers is a person who never decides; closed is signalled when
// the runtime stops waiting (the dialog closes).
type neverAnswers struct{ closed chan struct{} }

func (n neverAnswers) Approve(ctx context.Context, _ schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	go func() { <-ctx.Done(); n.closed <- struct{}{} }()
	return make(chan schema.SurfaceApprovalDecision)
}

// TestCallCancelledByTheHost: an MCP host that gives up on a tools/call
// (notifications/cancelled) stops the invoke in the page: the approval
// closes and the action never runs.
func TestCallCancelledByTheHost(t *testing.T) {
	person := neverAnswers{closed: make(chan struct{}, 1)}
	p := newPage(t, runtime.WithClock(runtime.SystemClock{}), runtime.WithApprover(person, 90*time.Second))
	var runs atomic.Int64
	if _, err := p.rt.DeclareAction(runtime.Action{ID: "order.refund", Title: "Refund", Approval: true,
		Run: func(context.Context, *runtime.Call) (any, error) { runs.Add(1); return "refunded", nil }}); err != nil {
		t.Fatal(err)
	}
	s := connectRuntime(t, p.rt)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "order_refund"}); err == nil {
		t.Fatal("the call returned before anyone approved")
	}
	select {
	case <-person.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the approval is still open after the host gave up")
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("the refund ran %d times after the host gave up", n)
	}
}
