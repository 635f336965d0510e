package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
)

// TestTransportErrors: a transport that knows the request never left says
// so (agent.ErrNotSent), and the client reports *NotSentError — nothing
// ran — instead of an unconfirmed call; any other failure stays
// unconfirmed.
func TestTransportErrors(t *testing.T) {
	tests := []struct {
		name            string
		err             error
		wantNotSent     bool
		wantUnconfirmed bool
	}{
		{name: "not sent", err: fmt.Errorf("cdp: the browser is gone; the request was not sent: %w", agent.ErrNotSent), wantNotSent: true},
		{name: "sent, answer lost", err: errors.New("cdp: lost the connection"), wantUnconfirmed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := agent.New(agent.TransportFunc(func(context.Context, []byte) ([]byte, error) { return nil, tt.err }))
			_, err := c.Invoke(context.Background(), "cart.add", nil)
			var ns *agent.NotSentError
			got := struct{ NotSent, IsNotSent, Unconfirmed bool }{errors.As(err, &ns), errors.Is(err, agent.ErrNotSent), errors.Is(err, agent.ErrUnconfirmed)}
			want := struct{ NotSent, IsNotSent, Unconfirmed bool }{tt.wantNotSent, tt.wantNotSent, tt.wantUnconfirmed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestWaitingReachesTheInvoke: a transport's Waiting notice reaches the
// invoke that sent the request it names (its OnWaiting), and nobody for
// another id.
func TestWaitingReachesTheInvoke(t *testing.T) {
	tests := []struct {
		name      string
		noticeFor string // "" is the request's own id
		perInvoke bool
		want      []string // who was told
	}{
		{name: "the invoke's own hook", perInvoke: true, want: []string{"invoke"}},
		{name: "an invoke without a hook", want: nil},
		{name: "a notice for another request", noticeFor: "someone-else", perInvoke: true, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var told []string
			tr := agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
				var req struct{ ID string }
				_ = json.Unmarshal(raw, &req)
				id := tt.noticeFor
				if id == "" {
					id = req.ID
				}
				agent.ReportWaiting(ctx, agent.Waiting{RequestID: id, Capability: "refund", Kind: "approval", Timeout: time.Minute})
				return []byte(`{"protocol":"pling.surface/0.1","id":"` + req.ID + `","ok":true,"result":{"value":1}}`), nil
			})
			c := agent.New(tr)
			var opts []agent.InvokeOption
			if tt.perInvoke {
				opts = append(opts, agent.OnWaiting(func(w agent.Waiting) {
					if w.Timeout != time.Minute || w.Kind != "approval" || w.Capability != "refund" {
						t.Errorf("notice %+v", w)
					}
					told = append(told, "invoke")
				}))
			}
			if _, err := c.Invoke(context.Background(), "refund", nil, opts...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, told); diff != "" {
				t.Errorf("told (-want +got):\n%s", diff)
			}
		})
	}
}
