package agent

import (
	"context"

	"github.com/pling-go/pling/runtime"
)

// Transport carries one Surface request to a page and brings its response
// back: request text in, response text out (docs/protocol.md §3). It knows nothing
// of the protocol; the Client does the checking and the recovery.
//
// An error means the exchange itself failed. For an invoke whose request
// may already have reached the page, the Client treats such an error like
// INTERNAL_ERROR: the outcome is unconfirmed and the call is never resent.
//
// A transport that holds resources (a browser, a connection) may also
// implement io.Closer; its owner closes it.
type Transport interface {
	RoundTrip(ctx context.Context, request []byte) ([]byte, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, request []byte) ([]byte, error)

// RoundTrip implements Transport.
func (f TransportFunc) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	return f(ctx, request)
}

// InProcess returns a transport to a runtime in this process: each request
// goes straight to rt.Handle. It is the transport of tests, of fixture
// pages and of Go programs that host a page themselves.
func InProcess(rt *runtime.Runtime) Transport { return inProcess{rt} }

type inProcess struct{ rt *runtime.Runtime }

func (t inProcess) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.rt.Handle(ctx, request), nil
}
