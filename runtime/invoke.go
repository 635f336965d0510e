package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/runs"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

// invocation carries one invoke through the pipeline of docs/protocol.md §4.2.
type invocation struct {
	rt    *Runtime
	req   *wire.Request
	sess  *gateSession
	exp   exposure
	snap  *snapshot
	cap   *capEntry
	act   Action
	call  *Call
	input map[string]any // validated, record removed

	statesBefore map[string]any
	revBefore    string
	feedback     []schema.Feedback
	valueJSON    []byte // Encode's text of the last handler's value
	pageBefore   schema.PageInfo
	ran          bool
	offscreen    bool
	recordLabel  string // the label of a folded invoke's record
}

// failure is a business failure: a code of the Action namespace.
type failure struct {
	code    perr.Code
	message string
	details map[string]any
	resume  string
}

func fail(code perr.Code, message string, details map[string]any) *failure {
	if message == "" {
		if e, ok := perr.Lookup(code); ok {
			message = e.Message.En
		}
	}
	return &failure{code: code, message: message, details: details}
}

// invoke runs the executor: resolve → params → loop → availability →
// policy/approval → before-hooks → run (steps, handoff) → expectation →
// after-hooks → success. It returns the result and the business code ("" on
// success).
func (rt *Runtime) invoke(ctx context.Context, req *wire.Request, sess *gateSession, exp exposure) (schema.SurfaceInvokeResult, perr.Code) {
	in := &invocation{rt: rt, req: req, sess: sess, exp: exp, snap: rt.snapshot()}
	value, ev, f := in.run(ctx)
	// A cancelled invoke still reports what changed.
	res := schema.SurfaceInvokeResult{Observation: in.observation(context.WithoutCancel(ctx))}
	if f != nil {
		e := perr.New(f.code, f.message, f.details)
		res.Error = &schema.ActionFailure{Code: string(e.Code()), Message: e.Message(), Details: e.Details(), Resume: f.resume}
		return res, e.Code()
	}
	res.Value, res.Evidence = value, ev
	if value != nil && in.valueJSON != nil {
		res.Value = jsonvalue.Compact(in.valueJSON)
	}
	return res, ""
}

func (in *invocation) run(ctx context.Context) (any, *schema.Evidence, *failure) {
	if f := in.resolve(ctx); f != nil {
		return nil, nil, f
	}
	if f := in.params(); f != nil {
		return nil, nil, f
	}
	rt := in.rt
	loopKey, fp, detect := in.loopKey(ctx)
	// A resume continues a failed execution; its single-use token already
	// bounds it, so it is not a repeat of the call.
	if detect && !in.req.HasResume && rt.loops.check(loopKey, fp, rt.cfg.clock.NowMs()) {
		return nil, nil, fail(perr.LoopDetected, "The same call repeated without any observed change", map[string]any{"repeats": rt.cfg.loop.Repeats})
	}
	if f := in.available(ctx); f != nil {
		return nil, nil, f
	}
	ev := &schema.Evidence{Capability: in.cap.id, Record: in.call.Record}
	if f := in.authorize(ctx, ev); f != nil {
		return nil, nil, f
	}
	for _, h := range in.snap.hooks {
		if h.Before == nil {
			continue
		}
		if reason := h.Before(ctx, in.call); reason != "" {
			return nil, nil, fail(perr.HookBlocked, cut(perr.RedactString(reason), rt.cfg.limits.MaxTextLen), nil)
		}
	}

	// Run stage: from here the call counts as an execution. A cancel
	// (Runtime.Cancel) that came first stops it here; one that comes later
	// is too late, except for a handoff, which the person has yet to
	// finish.
	if !proceed(ctx, in.act.Handoff == nil || len(in.act.Steps) > 0) {
		if in.act.Handoff != nil && len(in.act.Steps) == 0 {
			return nil, nil, fail(perr.HandoffCancelled, "The request was cancelled before the person was asked", cancelledDetails())
		}
		return nil, nil, fail(perr.PermissionDenied, "The request was cancelled before it ran", cancelledDetails())
	}
	startStep := 0
	if in.req.HasResume {
		step, ok := rt.steps.take(in.req.Resume, in.sess.key, in.cap.id, in.call.Record, rt.cfg.clock.NowMs())
		if !ok || len(in.act.Steps) == 0 {
			return nil, nil, fail(perr.InvalidParams, "The resume token is unknown, used, expired or for another call",
				map[string]any{"violations": []violation{{Path: "/resume", Reason: "is not a valid resume token"}}})
		}
		startStep = step
	}
	in.before(ctx)
	if detect && !in.req.HasResume {
		rt.loops.ran(loopKey, fp, rt.cfg.clock.NowMs())
	}
	rt.countRun(in.act.ID)
	in.ran = true

	var value any
	var f *failure
	switch {
	case len(in.act.Steps) > 0:
		value, f = in.runSteps(ctx, startStep, ev)
	case in.act.Handoff != nil:
		value, f = in.runHandoff(ctx, ev)
	default:
		value, f = in.runHandler(ctx, in.act.Run)
		if f == nil && in.act.Expect != nil {
			f = in.expect(ctx, in.act.Expect, ev, perr.ExpectationFailed)
		}
	}
	if f != nil {
		return nil, nil, f
	}
	for _, h := range in.snap.hooks {
		if h.After != nil {
			in.afterHook(ctx, h, value)
		}
	}
	ev.Summary = in.summary()
	return value, ev, nil
}

// resolve finds the capability and, for a fold, the record and the
// declaration that runs for it.
func (in *invocation) resolve(ctx context.Context) *failure {
	c := in.snap.byID[in.req.Capability]
	if c == nil {
		return fail(perr.ActionNotFound, "The current page has no such action", nil)
	}
	if c.conflict {
		return fail(perr.DuplicateActionID, "Two different actions are declared under this id; none of them runs", nil)
	}
	in.cap, in.act = c, c.action
	in.input = in.req.Input
	call := &Call{Capability: c.id, Action: c.action.ID, Subject: in.sess.Subject, RequestID: in.req.ID}
	if !in.sess.anonymous {
		call.Session = in.req.Session
	}
	if c.fold != nil {
		rv, ok := in.input["record"]
		rec, isStr := rv.(string)
		if !ok || !isStr || rec == "" {
			reason := "is required"
			if ok {
				reason = "must be a record id string"
			}
			return fail(perr.InvalidParams, "input.record names the row of a folded action",
				map[string]any{"violations": []violation{{Path: "/record", Reason: reason}}})
		}
		rs, err := readRecords(ctx, in.snap.records[c.fold.kind])
		if err != nil {
			return fail(perr.ExecutionFailed, "The page's records could not be read", nil)
		}
		rows := foldRows(c.fold, rs)
		row, f := recordByIDOrLabel(rows, c.fold.kind, rec)
		if f != nil {
			return f
		}
		rec = row.ID
		act, _ := c.fold.resolveRow(rec)
		in.act = act
		call.Record = rec
		in.recordLabel = row.Label
		// Checked at the availability stage, after params and loop.
		in.offscreen = row.Offscreen && !(act.Record != nil && act.Record.AllowOffscreen)
		input := make(map[string]any, len(in.input))
		for k, v := range in.input {
			if k != "record" {
				input[k] = v
			}
		}
		in.input = input
	}
	in.call = call
	return nil
}

func (in *invocation) params() *failure {
	input, vs := validateInput(in.act.Params, in.input)
	if len(vs) > 0 {
		if len(vs) > maxViolations {
			vs = vs[:maxViolations]
		}
		return fail(perr.InvalidParams, modeltool.SchemaRefused, map[string]any{"violations": vs})
	}
	in.input = input
	in.call.Input = input
	return nil
}

// loopKey is the identity of the call for loop detection, and the
// fingerprint of the page's states now; detect is false, and the two are
// not computed, when loop detection is off. The states are read either
// way.
func (in *invocation) loopKey(ctx context.Context) (key, fp string, detect bool) {
	detect = in.rt.cfg.loop.Repeats > 0
	var vals map[string]any
	if detect {
		vals = make(map[string]any, len(in.snap.states))
	}
	for _, s := range in.snap.states {
		v, err := readState(ctx, s)
		if !detect {
			continue
		}
		if err != nil {
			v = "\x00error"
		}
		vals[s.Key] = v
	}
	if !detect {
		return "", "", false
	}
	b, _ := canon.Marshal(in.input)
	key = in.sess.key + "\x00" + in.cap.id + "\x00" + in.call.Record + "\x00" + string(b)
	// Equal fingerprints are equal canonical texts: a short one is its own
	// fingerprint (it starts with '{', a digest does not), a long one its
	// digest.
	fb, _ := canon.Marshal(vals)
	if len(fb) <= 64 {
		return key, string(fb), true
	}
	return key, canon.Sum(fb), true
}

func (in *invocation) available(ctx context.Context) *failure {
	regions := in.rt.regions(ctx, in.snap)
	if hidden, reason := regions.blocked(in.act.Region, in.act.Markup != nil); hidden || reason != "" {
		return fail(perr.ActionUnavailable, reason, nil)
	}
	if in.offscreen {
		return fail(perr.ActionUnavailable, "The record is offscreen and this action runs only on visible records", nil)
	}
	if av := checkAvailable(ctx, &in.act, in.call.Record); !av.OK {
		reason := av.Reason
		if reason == "" {
			reason = "Not available now"
		}
		return fail(perr.ActionUnavailable, cut(perr.RedactString(reason), in.rt.cfg.limits.MaxTextLen), nil)
	}
	return nil
}

// before reads what the observation and expectations compare against.
func (in *invocation) before(ctx context.Context) {
	rt := in.rt
	in.statesBefore = map[string]any{}
	for _, s := range in.snap.states {
		in.statesBefore[s.Key] = rt.boundedState(ctx, s)
	}
	in.revBefore = rt.revisionOf(ctx, in.exp)
	in.pageBefore, in.feedback = rt.readPage(ctx)
}

// readPage reads the page's URL and title and its feedback through
// WithPage's reader, if one is set.
func (rt *Runtime) readPage(ctx context.Context) (schema.PageInfo, []schema.Feedback) {
	if rt.cfg.page == nil {
		return schema.PageInfo{}, nil
	}
	return rt.cfg.page(ctx)
}

// runHandler runs page code: an error or a panic is EXECUTION_FAILED (or
// the Action code the handler chose). A handler that has not finished by
// its deadline (Action.TimeoutMs, else WithHandlerTimeout) is
// EXECUTION_FAILED saying so: it may still be running and its effect is
// unknown; the page's author is warned (RATIONALE "Why does a handler
// have a deadline, and why EXECUTION_FAILED?").
func (in *invocation) runHandler(ctx context.Context, h Handler) (v any, f *failure) {
	in.valueJSON = nil
	if h == nil {
		return nil, nil
	}
	type outcome struct {
		v        any
		err      error
		panicked bool
	}
	done := make(chan outcome, 1)
	go func() {
		sent := false
		defer func() {
			// A panic, or a handler that ended its goroutine
			// (runtime.Goexit): the handler failed; never leave the
			// invoke waiting.
			_ = recover()
			if !sent {
				done <- outcome{panicked: true}
			}
		}()
		v, err := h(ctx, in.call)
		sent = true
		done <- outcome{v: v, err: err}
	}()
	timeout := in.act.TimeoutMs
	if timeout <= 0 {
		timeout = in.rt.cfg.handlerTimeoutMs
		// A FakeClock jumps ahead at every wait, another invoke's too: a
		// default deadline would fire on a scripted handler that waits for
		// its test. There, only a deadline asked for applies.
		if _, fake := in.rt.cfg.clock.(*FakeClock); fake && !in.rt.cfg.handlerTimeoutSet {
			timeout = 0
		}
	}
	var o outcome
	select {
	case o = <-done:
	default:
		if timeout <= 0 {
			o = <-done
			break
		}
		deadline, stop := deadlineAfter(in.rt.cfg.clock, timeout)
		defer stop()
		select {
		case o = <-done:
		case <-deadline:
			select {
			case o = <-done: // finished as the deadline passed: its answer stands
			default:
				if w := in.rt.cfg.warn; w != nil {
					w(fmt.Sprintf("pling: the handler of %q did not finish within %d ms: the agent was told its effect is unknown. Make it settle (resolve or reject) sooner, or give the action a longer timeoutMs", in.act.ID, timeout))
				}
				return nil, fail(perr.ExecutionFailed,
					fmt.Sprintf("The handler did not finish within %d ms; it may still be running, and whether it had an effect is unknown", timeout),
					map[string]any{"timeoutMs": timeout, "finished": false})
			}
		}
	}
	if o.panicked {
		return nil, fail(perr.ExecutionFailed, "The handler failed", nil)
	}
	if o.err != nil {
		return nil, handlerFailure(o.err, in.rt.cfg.limits.MaxTextLen)
	}
	b, err := schema.Encode(o.v)
	if err != nil {
		return nil, fail(perr.ExecutionFailed, "The handler returned a value that is not JSON", nil)
	}
	// The result's value is always the last handler's (steps, handoff or
	// plain run): its text is kept so that the response does not encode
	// it a second time.
	in.valueJSON = b
	return o.v, nil
}

// deadlineAfter is a handler's deadline on c. On a FakeClock it passes
// only when the clock is moved past it (Advance, or another wait), never
// at once as FakeClock.After does, so a scripted handler is never timed
// out by the wait for it.
func deadlineAfter(c Clock, ms int64) (<-chan struct{}, func() bool) {
	if fc, ok := c.(*FakeClock); ok {
		ch := make(chan struct{})
		var once sync.Once
		return ch, fc.afterFuncStop(ms, func() { once.Do(func() { close(ch) }) })
	}
	return afterStop(c, ms)
}

// handlerFailure maps a handler's error: a *perr.Error with an Action code
// keeps its code (business logic may deny or report its own expectation);
// anything else is EXECUTION_FAILED with the error's text, redacted and cut.
func handlerFailure(err error, maxText int) *failure {
	var pe *perr.Error
	if errors.As(err, &pe) {
		if ns, ok := pe.Namespace(); ok && ns == perr.Action {
			return &failure{code: pe.Code(), message: cut(perr.RedactString(pe.Message()), maxText), details: pe.Details()}
		}
	}
	msg := cut(perr.RedactString(err.Error()), maxText)
	if msg == "" {
		msg = "The handler failed"
	}
	return fail(perr.ExecutionFailed, msg, nil)
}

func (in *invocation) expect(ctx context.Context, e *Expectation, ev *schema.Evidence, code perr.Code) *failure {
	before := in.statesBefore[e.State]
	res := in.rt.observe(ctx, in.snap, e, before)
	ev.Expectations = append(ev.Expectations, res)
	if res.Met {
		return nil
	}
	msg := fmt.Sprintf("Expected %s to %s; it did not within %d ms", e.State, res.Condition, in.rt.expectTimeout(e))
	if code == perr.HandoffFailed {
		msg = fmt.Sprintf("The person reported completion, but %s did not %s", e.State, res.Condition)
	}
	return fail(code, msg, map[string]any{"expectation": res})
}

func (in *invocation) runSteps(ctx context.Context, start int, ev *schema.Evidence) (any, *failure) {
	rt := in.rt
	var value any
	for i := start; i < len(in.act.Steps); i++ {
		st := in.act.Steps[i]
		in.call.Step = i
		if st.Expect != nil {
			// Each step's expectation compares with the state before it.
			v, _ := rt.readStateKey(ctx, in.snap, st.Expect.State)
			in.statesBefore[st.Expect.State] = v
		}
		v, f := in.runHandler(ctx, st.Run)
		if f == nil && st.Expect != nil {
			f = in.expect(ctx, st.Expect, ev, perr.ExpectationFailed)
		}
		if f != nil {
			tok, err := rt.steps.issue(rt.cfg.random, resumeEntry{session: in.sess.key, capability: in.cap.id, record: in.call.Record,
				step: i, expiresMs: rt.cfg.clock.NowMs() + rt.cfg.resumeTTLMs}, rt.cfg.clock.NowMs())
			if err != nil {
				panic(err) // no randomness: INTERNAL_ERROR
			}
			d := map[string]any{"step": i, "cause": map[string]any{"code": string(f.code), "message": f.message}}
			if st.Title != "" {
				d["title"] = st.Title
			}
			sf := fail(perr.StepFailed, fmt.Sprintf("Step %d of %d failed: %s", i+1, len(in.act.Steps), f.message), d)
			sf.resume = tok
			return nil, sf
		}
		value = v
		ev.Steps++
	}
	if in.act.Run != nil {
		v, f := in.runHandler(ctx, in.act.Run)
		if f != nil {
			return nil, f
		}
		value = v
	}
	if in.act.Expect != nil {
		if f := in.expect(ctx, in.act.Expect, ev, perr.ExpectationFailed); f != nil {
			return nil, f
		}
	}
	return value, nil
}

func (in *invocation) runHandoff(ctx context.Context, ev *schema.Evidence) (any, *failure) {
	rt := in.rt
	value, f := in.runHandler(ctx, in.act.Run)
	if f != nil {
		return nil, f
	}
	if rt.cfg.handoff == nil {
		return nil, fail(perr.ExecutionFailed, "This page has no handoff UI to show the person", nil)
	}
	timeout := in.act.Handoff.TimeoutMs
	if timeout == 0 {
		timeout = rt.cfg.handoffTimeoutMs
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt.notifyWaiting(ctx, Waiting{RequestID: in.req.ID, Capability: in.cap.id, Kind: WaitingHandoff, TimeoutMs: timeout})
	ch := rt.cfg.handoff.Show(hctx, HandoffRequest{Capability: in.cap.id, Record: in.call.Record, Title: in.act.Title,
		Prompt: in.act.Handoff.Prompt, TimeoutMs: timeout})
	outcome, ok := wait(hctx, rt.cfg.clock, ch, timeout)
	switch {
	case (ok && outcome == HandoffDone && !proceed(ctx, true)) || (!ok && ctx.Err() != nil):
		return nil, fail(perr.HandoffCancelled, "The request was cancelled while the person was asked", cancelledDetails())
	case !ok:
		return nil, fail(perr.HandoffTimeout, "The person did not finish in time", map[string]any{"timeoutMs": timeout})
	case outcome == HandoffCancel:
		return nil, fail(perr.HandoffCancelled, "The person cancelled the handoff", nil)
	case outcome != HandoffDone:
		return nil, fail(perr.HandoffFailed, "The handoff ended without an answer", nil)
	}
	ev.Handoff = "done"
	if in.act.Expect != nil {
		if f := in.expect(ctx, in.act.Expect, ev, perr.HandoffFailed); f != nil {
			return nil, f
		}
	}
	if in.act.Handoff.Result != nil {
		// The value is read after the person acted, not taken from
		// the handler that ran before they were asked.
		return in.runHandler(ctx, in.act.Handoff.Result)
	}
	return value, nil
}

func (in *invocation) afterHook(ctx context.Context, h Hook, value any) {
	defer func() { _ = recover() }() // an after-hook observes; its failure changes nothing
	h.After(ctx, in.call, value)
}

// observation is the bounded change after the call. Before the run stage
// nothing changed; only the current revision is reported.
func (in *invocation) observation(ctx context.Context) *schema.SurfaceObservation {
	rt := in.rt
	rev := rt.revisionOf(ctx, in.exp)
	obs := &schema.SurfaceObservation{Revision: rev}
	if !in.ran {
		return obs
	}
	obs.CapabilitiesChanged = rev != in.revBefore
	snap := rt.snapshot()
	n := 0
	for _, s := range snap.states {
		after := rt.boundedState(ctx, s)
		before, had := in.statesBefore[s.Key]
		if had && jsonEqual(before, after) {
			continue
		}
		if n >= rt.cfg.limits.MaxStates {
			obs.Truncated = true
			break
		}
		if obs.States == nil {
			obs.States = map[string]schema.StateChange{}
		}
		obs.States[s.Key] = schema.StateChange{Before: before, After: after}
		n++
	}
	pageAfter, fbAfter := rt.readPage(ctx)
	if len(fbAfter) > 0 {
		seen := make(map[string]bool, len(in.feedback))
		for _, f := range in.feedback {
			seen[f.Level+"\x00"+f.Message] = true
		}
		for _, f := range fbAfter {
			if seen[f.Level+"\x00"+f.Message] {
				continue
			}
			if len(obs.Feedback) >= rt.cfg.limits.MaxFeedback {
				obs.Truncated = true
				break
			}
			obs.Feedback = append(obs.Feedback, schema.Feedback{Level: f.Level, Message: cut(f.Message, rt.cfg.limits.MaxTextLen)})
		}
	}
	if pageAfter.URL != in.pageBefore.URL {
		obs.Navigation = &schema.Navigation{From: cut(in.pageBefore.URL, 2048), To: cut(pageAfter.URL, 2048)}
	}
	return obs
}

func (in *invocation) summary() string {
	var b strings.Builder
	b.WriteString(in.cap.id)
	if in.call.Record != "" {
		b.WriteString(" on " + in.call.Record)
	}
	b.WriteString(" ran")
	return b.String()
}

// countRun counts invokes that reached the run stage, per base action id.
func (rt *Runtime) countRun(action string) {
	rt.runsMu.Lock()
	if rt.runs == nil {
		rt.runs = map[string]int{}
	}
	rt.runs[action]++
	rt.runsMu.Unlock()
}

func init() { runs.Of = func(rt any) map[string]int { return rt.(*Runtime).runCounts() } }

// runCounts returns, per base action id, how many invokes reached the run
// stage (a handler, a first step or a handoff started). The conformance
// suite's "calls" reads it, through internal/runs.
func (rt *Runtime) runCounts() map[string]int {
	rt.runsMu.Lock()
	defer rt.runsMu.Unlock()
	out := make(map[string]int, len(rt.runs))
	for k, v := range rt.runs {
		out[k] = v
	}
	return out
}
