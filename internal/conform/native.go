package conform

import (
	"context"
	"encoding/json"

	"github.com/pling-go/pling/internal/conform/fixture"
)

// Native runs fixture pages in this process, on the Go runtime itself.
type Native struct{}

// Name implements Host.
func (Native) Name() string { return "native" }

// Load implements Host.
func (Native) Load(_ context.Context, page json.RawMessage) (Page, error) {
	p, err := fixture.Load(page)
	if err != nil {
		return nil, err
	}
	return nativePage{p}, nil
}

type nativePage struct{ p *fixture.Page }

func (n nativePage) Handle(ctx context.Context, req []byte) ([]byte, error) {
	return n.p.Handle(ctx, req), nil
}
func (n nativePage) Advance(_ context.Context, ms int64) error     { n.p.Advance(ms); return nil }
func (n nativePage) Calls(context.Context) (map[string]int, error) { return n.p.Calls(), nil }
func (n nativePage) Close() error                                  { return nil }

func (n nativePage) Declare(_ context.Context, d json.RawMessage) (json.RawMessage, error) {
	out, err := n.p.Declare(d)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (n nativePage) Dispose(_ context.Context, ids json.RawMessage) error { return n.p.Dispose(ids) }

func (n nativePage) CallTool(ctx context.Context, c ToolCall) ([]byte, error) {
	return n.p.CallTool(ctx, c.Session, c.Name, c.Arguments), nil
}
