package runtime

import (
	"bytes"
	"context"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// Handle answers one Surface request (docs/protocol.md §3): request text in,
// response text out. It never fails: every failure is a response. The
// check order of §3.3 is followed exactly — envelope (steps 1–5), session,
// rate limit, replay guard, exposure, executor — and anything unexpected at
// steps 6–10 is INTERNAL_ERROR.
func (rt *Runtime) Handle(ctx context.Context, raw []byte) []byte {
	return bytes.Join(rt.handleParts(ctx, raw), nil)
}

// handleParts answers a request as the pieces of the response text, in
// order.
func (rt *Runtime) handleParts(ctx context.Context, raw []byte) [][]byte {
	start := rt.cfg.clock.NowMs()
	req, rej := wire.DecodeRequest(raw)
	if rej != nil {
		rt.audit(start, rej.ID, "", "", schema.OutcomeProtocolError, rej.Code)
		return [][]byte{mustEncode(rej.Response())}
	}
	return rt.serve(ctx, req, start)
}

// refuse answers request text that a host refused without handing it
// over: wire.ReasonTooLarge for text its length alone shows to be longer
// than schema.MaxRequestBytes (a JS string of more UTF-16 code units than
// that has more UTF-8 bytes too), wire.ReasonInvalidUTF8 for text with
// no UTF-8 form (a JS string with a lone surrogate). The response and the
// audit record are those Handle gives such text at step 1 of §3.3.
func (rt *Runtime) refuse(reason string) []byte {
	start := rt.cfg.clock.NowMs()
	rej := wire.NotAnObject(reason)
	rt.audit(start, rej.ID, "", "", schema.OutcomeProtocolError, rej.Code)
	return mustEncode(rej.Response())
}

// handleValue answers a request that arrived already parsed (a JS object
// decoded to Go values). It takes the same path as text.
func (rt *Runtime) handleValue(ctx context.Context, v any) []byte {
	start := rt.cfg.clock.NowMs()
	req, rej := wire.DecodeRequestValue(v)
	if rej != nil {
		rt.audit(start, rej.ID, "", "", schema.OutcomeProtocolError, rej.Code)
		return mustEncode(rej.Response())
	}
	return bytes.Join(rt.serve(ctx, req, start), nil)
}

// serve runs steps 6–10 for a decoded request and returns the response as
// pieces.
func (rt *Runtime) serve(ctx context.Context, req *wire.Request, start int64) (out [][]byte) {
	id := req.ID
	capability := ""
	if req.Method == schema.MethodInvoke {
		capability = req.Capability
	}
	var sess *gateSession
	guard := rt.cfg.gate.guard
	complete := guard.Complete // and the shared guard's, once both consumed the id
	consumed := false
	defer func() {
		if r := recover(); r != nil {
			// Unexpected at steps 6–10: INTERNAL_ERROR, never a success,
			// and nothing about business success can be inferred.
			out = rt.protocolFailure(start, &id, req, perr.New(perr.InternalError, "", nil))
			if consumed {
				func() {
					defer func() { _ = recover() }() // a guard that panics again changes nothing
					complete(context.WithoutCancel(ctx), sess.key, id, ReplayRecord{Code: string(perr.InternalError)})
				}()
			}
		}
	}()

	// Step 6: session. Steps 6 to 8 read the clock once.
	now := rt.cfg.clock.NowMs()
	sess, e := rt.gate.session(ctx, req, now)
	if e != nil {
		return rt.protocolFailure(start, &id, req, e)
	}
	// Step 7: rate limit.
	ok, retry, err := rt.cfg.gate.limiter.Allow(ctx, sess.key, req.Method, now)
	if err != nil {
		return rt.protocolFailure(start, &id, req, perr.New(perr.RateLimitUnavailable, "", nil))
	}
	if !ok {
		return rt.protocolFailure(start, &id, req, perr.New(perr.RateLimited, "", nil).WithRetryAfter(max(retry, 1)))
	}
	// Step 8: replay guard, then the shared one for an invoke that can
	// change something.
	shared := rt.cfg.gate.shared
	prev, err := guard.Consume(ctx, sess.key, id, sess.ExpiresAtMs, now)
	if err != nil {
		return rt.protocolFailure(start, &id, req, perr.New(perr.ReplayGuardUnavailable, "", nil))
	}
	if prev == nil && shared != nil && req.Method == schema.MethodInvoke && rt.changes(req.Capability) {
		sprev, serr := shared.Consume(ctx, sess.key, id, sess.ExpiresAtMs, now)
		if serr != nil || sprev != nil {
			// Refused before anything ran: the page's guard forgets the
			// id, so a resend asks the shared guard again.
			if r, ok := guard.(replayReleaser); ok {
				r.Release(context.WithoutCancel(ctx), sess.key, id)
			}
			if serr != nil {
				return rt.protocolFailure(start, &id, req, perr.New(perr.ReplayGuardUnavailable, "", nil))
			}
			prev = sprev
		} else {
			complete = func(ctx context.Context, session, id string, r ReplayRecord) {
				guard.Complete(ctx, session, id, r)
				shared.Complete(ctx, session, id, r)
			}
		}
	}
	if prev != nil {
		d := map[string]any{"completed": prev.Completed}
		if prev.Completed {
			d["ok"] = prev.OK
			if prev.Code != "" {
				d["code"] = prev.Code
			}
		}
		return rt.protocolFailure(start, &id, req, perr.New(perr.ReplayDetected, "", map[string]any{"previous": d}))
	}
	consumed = true
	exp := rt.gate.exposureOf(sess)
	record := func(r ReplayRecord) { complete(context.WithoutCancel(ctx), sess.key, id, r) }

	switch req.Method {
	case schema.MethodDescribe:
		maxRecords := -1
		if req.Options.MaxRecords != nil {
			maxRecords = *req.Options.MaxRecords
		}
		desc, err := rt.describeParts(ctx, exp, maxRecords)
		if err != nil {
			panic(err) // a record or state reader failed: INTERNAL_ERROR
		}
		record(ReplayRecord{OK: true})
		rt.audit(start, &id, req.Method, "", schema.OutcomeOK, "")
		return resultParts(id, desc...)
	default:
		// Step 9: exposure.
		if !exp.allows(req.Capability) {
			record(ReplayRecord{Code: string(perr.CapabilityNotExposed)})
			return rt.protocolFailure(start, &id, req, perr.New(perr.CapabilityNotExposed, "", nil))
		}
		// Step 10: the executor, cancellable by (session, id) while it
		// runs (Runtime.Cancel).
		ictx, untrack := rt.track(ctx, sess.key, id)
		defer untrack()
		res, code := rt.invoke(ictx, req, sess, exp)
		b, err := wire.AppendInvokeResult(nil, &res)
		if err != nil {
			panic(err)
		}
		outcome := schema.OutcomeOK
		if code != "" {
			outcome = schema.OutcomeBusinessError
		}
		record(ReplayRecord{OK: true, Code: string(code)})
		rt.audit(start, &id, req.Method, capability, outcome, code)
		return resultParts(id, b)
	}
}

func (rt *Runtime) protocolFailure(start int64, id *string, req *wire.Request, e *perr.Error) [][]byte {
	capability := ""
	if req.Method == schema.MethodInvoke {
		capability = req.Capability
	}
	rt.audit(start, id, req.Method, capability, schema.OutcomeProtocolError, e.Code())
	return [][]byte{mustEncode(wire.FailureResponse(id, e))}
}

func (rt *Runtime) audit(start int64, id *string, method schema.Method, capability, outcome string, code perr.Code) {
	sink := rt.cfg.gate.audit
	if sink == nil {
		return
	}
	now := rt.cfg.clock.NowMs()
	ev := schema.SurfaceAuditEvent{TimeMs: now, RequestID: id, Method: string(method), Capability: capability,
		Outcome: outcome, Code: string(code), DurationMs: max(now-start, 0)}
	func() {
		defer func() { _ = recover() }() // a failing sink must not turn a response into a crash
		sink.Record(ev)
	}()
}

// resultBytes writes an ok:true response around already-encoded result
// bytes (the pieces of one result, in order), without re-encoding them:
// one allocation, one copy.
func resultBytes(id string, result ...[]byte) []byte {
	return bytes.Join(resultParts(id, result...), nil)
}

// resultParts is resultBytes as pieces.
func resultParts(id string, result ...[]byte) [][]byte {
	idJSON := jsonvalue.AppendQuoted(nil, id, true)
	parts := make([][]byte, 0, len(result)+4)
	parts = append(parts, []byte(`{"protocol":"`+schema.Protocol+`","id":`), idJSON, []byte(`,"ok":true,"result":`))
	parts = append(parts, result...)
	return append(parts, []byte{'}'})
}

func mustEncode(v any) []byte {
	b, err := schema.Encode(v)
	if err != nil {
		// Responses are built from our own types; this cannot happen.
		return []byte(`{"protocol":"` + schema.Protocol + `","id":null,"ok":false,"error":{"code":"INTERNAL_ERROR","message":"Internal error"}}`)
	}
	return b
}

// changes reports whether an invoke of capability id can change something,
// and so consumes its id in the shared replay guard too: its risk is write
// or destructive (a fold's, or any of its rows' without a template), or
// the page does not declare it (nothing is known of it, so it is not
// trusted to be harmless). Page code is not asked.
func (rt *Runtime) changes(id string) bool {
	c := rt.snapshot().byID[id]
	switch {
	case c == nil:
		return true
	case c.fold != nil && !c.fold.hasTemplate:
		for _, a := range c.fold.rows {
			if riskOf(&a) != schema.RiskRead {
				return true
			}
		}
		return false
	default:
		return riskOf(&c.action) != schema.RiskRead
	}
}
