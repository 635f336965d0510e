//go:build js && wasm

package main

import (
	"context"
	"errors"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// A page configured with authority: URL follows that authority
// (docs/authority.md "Pages that follow the authority"): package follow
// over the browser's fetch, so net/http stays out of the module. Every
// fetch runs on a goroutine (the follower's, or a request's worker) and is
// awaited through then/catch callbacks, never from a JS callback
// (docs/hosts.md §1).

// followAuthority starts the follower and returns the runtime options it
// gives: the session verifier and the shared replay guard, with guard
// (the page's own shared guard, or nil) for requests without a session.
// The follower stops when the page goes away (pagehide, unless the page
// is kept in the back-forward cache, or unload).
func followAuthority(url, origin string, requireSession bool, guard runtime.ReplayGuard) (*follow.Follower, []runtime.Option, error) {
	if origin == "" {
		return nil, nil, errors.New("pling: authority needs the page origin")
	}
	f, err := follow.New(url, origin, follow.WithTransport(fetchTransport{}))
	if err != nil {
		return nil, nil, err
	}
	if add, err := global.Get("addEventListener"); err == nil && add.Type() == safejs.TypeFunction {
		stop, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
			// A page kept in the back-forward cache (persisted) is
			// frozen, not gone: its follower resumes when it is shown
			// again, its first poll after that answering afresh.
			if len(args) > 0 && args[0].Type() == safejs.TypeObject {
				if p, err := args[0].Get("persisted"); err == nil {
					if b, _ := p.Truthy(); b {
						return nil
					}
				}
			}
			f.Stop() // never blocks: the follower's goroutine ends on its own
			return nil
		})
		if err == nil {
			for _, ev := range []string{"pagehide", "unload"} {
				_, _ = add.Invoke(ev, stop.Value())
			}
		}
	}
	return f, []runtime.Option{runtime.WithSessions(f, requireSession), runtime.WithSharedReplayGuard(f.ReplayGuard(guard))}, nil
}

// fetchTransport is follow.Transport over fetch: no cookies
// (credentials "omit"), no HTTP cache, aborted when ctx ends.
type fetchTransport struct{}

func (fetchTransport) Do(ctx context.Context, method, url, bearer string, body []byte) (int, []byte, error) {
	fetch, err := global.Get("fetch")
	if err != nil || fetch.Type() != safejs.TypeFunction {
		return 0, nil, errors.New("pling: this host has no fetch")
	}
	headers, err := newObject(nil)
	if err != nil {
		return 0, nil, err
	}
	if bearer != "" {
		_ = headers.Set("Authorization", "Bearer "+bearer)
	}
	props := map[string]any{"method": method, "headers": headers, "credentials": "omit", "cache": "no-store"}
	if body != nil {
		_ = headers.Set("Content-Type", "application/json")
		props["body"] = string(body)
	}
	done := make(chan struct{})
	defer close(done)
	if ctor, err := global.Get("AbortController"); err == nil && ctor.Type() == safejs.TypeFunction {
		if ac, err := ctor.New(); err == nil {
			if sig, err := ac.Get("signal"); err == nil {
				props["signal"] = sig
				go func() {
					select {
					case <-ctx.Done():
						_, _ = ac.Call("abort")
					case <-done:
					}
				}()
			}
		}
	}
	init, err := newObject(props)
	if err != nil {
		return 0, nil, err
	}
	res, err := callFn(fetch, url, init)
	if err != nil {
		return 0, nil, err
	}
	sv, err := res.Get("status")
	if err != nil {
		return 0, nil, err
	}
	status, err := sv.Int()
	if err != nil {
		return 0, nil, err
	}
	b, err := readCapped(res, follow.MaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	return status, b, nil
}

// errTooLarge is an answer past follow.MaxBodyBytes.
var errTooLarge = errors.New("pling: the authority's answer is too large")

// readCapped reads a fetch Response's body chunk by chunk and cancels it
// once it passes max bytes, so a hostile authority's endless or huge body
// is never held whole (res.text() would read all of it first). A host
// whose Response has no readable body stream falls back to text().
func readCapped(res safejs.Value, max int) ([]byte, error) {
	body, err := res.Get("body")
	var reader safejs.Value
	if err == nil && body.Type() == safejs.TypeObject {
		if gr, err := body.Get("getReader"); err == nil && gr.Type() == safejs.TypeFunction {
			reader, _ = body.Call("getReader")
		}
	}
	if reader.Type() != safejs.TypeObject {
		tv, err := awaitCall(res, "text")
		if err != nil {
			return nil, err
		}
		if n := stringLength(tv); n > max {
			return nil, errTooLarge
		}
		text, err := tv.String()
		return []byte(text), err
	}
	var out []byte
	for {
		r, err := awaitCall(reader, "read")
		if err != nil {
			return nil, err
		}
		dv, err := r.Get("done")
		if err != nil {
			return nil, err
		}
		if done, _ := dv.Bool(); done {
			return out, nil
		}
		v, n, err := lengthOf(r, "value")
		if err != nil {
			return nil, err
		}
		if len(out)+n > max {
			_, _ = reader.Call("cancel")
			return nil, errTooLarge
		}
		chunk := make([]byte, n)
		if _, err := safejs.CopyBytesToGo(chunk, v); err != nil {
			return nil, err
		}
		out = append(out, chunk...)
	}
}

// approvalSent tells the page, through its waiting hook, the id of an
// approval its authority now holds: pling:waiting with {id, capability,
// kind: "approval", approval}, so the page can point the person at the
// authority's approval screen, and the agent's transport (the request id
// says whose) can ask the agent's host to. The id opens nothing by itself (the screen
// needs the operator key, collecting needs the poll secret).
func approvalSent(hooks safejs.Value) follow.ApprovalSent {
	if hooks.Type() != safejs.TypeObject {
		return nil
	}
	f, err := hooks.Get("waiting")
	if err != nil || f.Type() != safejs.TypeFunction {
		return nil
	}
	return func(ch schema.SurfaceApprovalChallenge, requestID, id string) {
		_, _ = f.Invoke(mustJS(map[string]any{"id": requestID, "capability": ch.Capability, "kind": "approval", "approval": id,
			"timeoutMs": max(ch.ExpiresAtMs-runtime.SystemClock{}.NowMs(), 0)}))
	}
}
