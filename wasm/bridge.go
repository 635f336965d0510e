//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/hack-pad/safejs"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/schema/pagespec"
	"github.com/pling-go/pling/wasm/internal/jsonmap"
)

// The page bridge: the shim's window.pling calls these with JSON text and
// JS functions; handlers are called back through safejs, and async results
// are promises.

var page = struct {
	sync.Mutex
	rt      *runtime.Runtime
	handles map[int]*runtime.Handle
	next    int
	hooks   safejs.Value // {handoff, approve, page, feedback} from the shim
	// refused are the declarations refused so far, as the author read
	// them on the console (lint; bounded).
	refused []string
}{handles: map[int]*runtime.Handle{}}

// declareNoting is declare, noting a refused declaration or a conflict
// for lint (pling check, the development console report).
func declareNoting(args []safejs.Value) (any, error) {
	out, err := declare(args)
	msg := ""
	if err != nil {
		msg = authorText(err)
	} else if m, ok := out.(map[string]any); ok {
		if e, ok := m["error"].(string); ok {
			msg = e
		}
	}
	if msg != "" {
		page.Lock()
		if len(page.refused) < 100 {
			page.refused = append(page.refused, msg)
		}
		page.Unlock()
	}
	return out, err
}

func pageRuntime() (*runtime.Runtime, error) {
	page.Lock()
	defer page.Unlock()
	if page.rt == nil {
		return nil, errors.New("pling: init has not been called")
	}
	return page.rt, nil
}

// initPage builds the page runtime once: init(configJSON, hooks).
func initPage(args []safejs.Value) (any, error) {
	text, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	c, err := decodeSpec(text, pagespec.DecodeConfig)
	if err != nil {
		return nil, fmt.Errorf("pling: bad configuration: %w", err)
	}
	hooks := safejs.Undefined()
	if len(args) > 1 {
		hooks = args[1]
	}
	// A page says in describe which of its actions it does not expose
	// (docs/page-api.md §2); fixture pages do not, so conformance is as
	// before.
	opts := []runtime.Option{runtime.WithExpose(c.Expose...), runtime.WithUnexposedFeedback()}
	if c.Anonymous != nil {
		opts = append(opts, runtime.WithAnonymous(*c.Anonymous...))
	}
	if c.Origin != "" {
		opts = append(opts, runtime.WithOrigin(c.Origin))
	}
	if c.Authority != "" {
		if len(c.Keys) > 0 {
			return nil, errors.New("pling: keys and authority exclude each other: the authority publishes the keys")
		}
	} else if len(c.Keys) > 0 {
		v, err := tokenVerifier(c.Keys, c.Origin)
		if err != nil {
			return nil, err
		}
		opts = append(opts, runtime.WithSessions(v, c.RequireSession))
	} else if c.RequireSession {
		return nil, errors.New("pling: requireSession needs verification keys")
	}
	if r := c.RateLimit; r != nil {
		opts = append(opts, runtime.WithRateLimit(runtime.RateLimit{Describe: runtime.Bucket(r.Describe), Invoke: runtime.Bucket(r.Invoke)}))
	}
	if c.Loop != nil {
		opts = append(opts, runtime.WithLoop(runtime.LoopConfig{Repeats: c.Loop.Repeats, Window: pagespec.Millis(c.Loop.WindowMs)}))
	}
	if c.ExpectTimeoutMs > 0 {
		opts = append(opts, runtime.WithExpectTimeout(pagespec.Millis(c.ExpectTimeoutMs), 0))
	}
	if c.HandlerTimeoutMs > 0 {
		opts = append(opts, runtime.WithHandlerTimeout(pagespec.Millis(c.HandlerTimeoutMs)))
	}
	opts = append(opts, runtime.WithAuthorWarning(consoleWarn))
	shared, err := pageReplayGuard(c.ReplayGuard)
	if err != nil {
		return nil, err
	}
	switch c.Approvals {
	case "", "page":
	case "authority":
		if c.Authority == "" {
			return nil, errors.New(`pling: approvals "authority" needs authority`)
		}
	default:
		return nil, errors.New(`pling: approvals is "page" or "authority"`)
	}
	var follower interface{ Stop() }
	if c.Authority != "" {
		f, aopts, err := followAuthority(c.Authority, c.Origin, c.RequireSession, shared)
		if err != nil {
			return nil, err
		}
		follower, opts = f, append(opts, aopts...)
		if c.Approvals == "authority" {
			// The person approves on the site's screen; the in-page
			// dialog and the page's approve hook are never asked, so
			// nothing a page script clicks or calls approves
			// (docs/page-api.md §4.2).
			opts = append(opts, runtime.WithApprover(f.Approver(approvalSent(hooks)), pagespec.Millis(c.ApprovalTTLMs)))
		}
	} else if shared != nil {
		opts = append(opts, runtime.WithSharedReplayGuard(shared))
	}
	if hooks.Type() == safejs.TypeObject {
		if f, err := hooks.Get("handoff"); err == nil && f.Type() == safejs.TypeFunction {
			opts = append(opts, runtime.WithHandoff(jsHandoff{f}, pagespec.Millis(c.HandoffTimeoutMs)))
		}
		if f, err := hooks.Get("approve"); err == nil && f.Type() == safejs.TypeFunction && c.Approvals != "authority" {
			opts = append(opts, runtime.WithApprover(jsApprover{f}, pagespec.Millis(c.ApprovalTTLMs)))
		}
		if f, err := hooks.Get("waiting"); err == nil && f.Type() == safejs.TypeFunction {
			// waiting({id, capability, kind, timeoutMs}): a person is asked
			// (the shim tells the page and the agent's transport). Not
			// awaited.
			opts = append(opts, runtime.WithWaiting(func(w runtime.Waiting) {
				_, _ = f.Invoke(mustJS(map[string]any{"id": w.RequestID, "capability": w.Capability, "kind": w.Kind, "timeoutMs": w.TimeoutMs}))
			}))
		}
		var pageR, fbR *hookReader
		if f, err := hooks.Get("page"); err == nil && f.Type() == safejs.TypeFunction {
			pageR = newHookReader(f)
		}
		if f, err := hooks.Get("feedback"); err == nil && f.Type() == safejs.TypeFunction {
			fbR = newHookReader(f)
		}
		if read := pageReader(fbR, pageR); read != nil {
			opts = append(opts, runtime.WithPage(read))
		}
	}
	page.Lock()
	defer page.Unlock()
	if page.rt != nil {
		if follower != nil {
			follower.Stop()
		}
		return nil, errors.New("pling: init was called twice; the configuration is immutable")
	}
	page.rt = runtime.New(opts...)
	page.hooks = hooks
	return true, nil
}

// hookReader reads what a page hook (page, feedback) returns, as JSON. The
// runtime reads both hooks before and after every invoke, so this is on
// the invoke path, and each JS value or string that crosses costs: where
// JSON.stringify honours toJSON, as every JS engine does,
// JSON.stringify({toJSON: hook}) calls the hook and serializes its value in
// one call into JS; and text equal to the last read (the page rarely
// changes between reads) is recognised (sameText) instead of being copied
// into Go again.
type hookReader struct {
	fn     safejs.Value
	holder safejs.Value // {toJSON: fn bound to undefined}, or undefined

	mu   sync.Mutex
	last safejs.Value // the last text read, a JS string, or undefined
	text string       // its copy in Go
}

func newHookReader(fn safejs.Value) *hookReader {
	r := &hookReader{fn: fn, holder: safejs.Undefined(), last: safejs.Undefined()}
	if !stringifyCallsToJSON() {
		return r
	}
	// Bound, the hook runs with the this it has when called directly.
	bound, err := fn.Call("bind", safejs.Undefined())
	if err != nil || bound.Type() != safejs.TypeFunction {
		return r
	}
	if h, err := newObject(map[string]any{"toJSON": bound}); err == nil {
		r.holder = h
	}
	return r
}

// stringifyCallsToJSON reports whether this host's JSON.stringify calls a
// toJSON method (a Go host's JSON may not).
var stringifyCallsToJSON = sync.OnceValue(func() bool {
	probe, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any { return "ok" })
	if err != nil {
		return false
	}
	defer probe.Release()
	h, err := newObject(map[string]any{"toJSON": probe.Value()})
	if err != nil {
		return false
	}
	s, err := jsStringify.Invoke(h)
	if err != nil || s.Type() != safejs.TypeString {
		return false
	}
	text, _ := s.String()
	return text == `"ok"`
})

// readInto calls the hook with no arguments and decodes its JSON.
func (r *hookReader) readInto(dst any) {
	var s safejs.Value
	if r.holder.Type() == safejs.TypeObject {
		var err error
		if s, err = jsStringify.Invoke(r.holder); err != nil {
			return
		}
	} else {
		v, err := r.fn.Invoke()
		if err != nil {
			return
		}
		if s, err = jsStringify.Invoke(v); err != nil {
			return
		}
	}
	if s.Type() != safejs.TypeString {
		return
	}
	decodeHookText(r.textOf(s), dst)
}

// decodeHookText decodes a hook's JSON text into dst as json.Unmarshal
// would, the usual values (a plain page, no feedback) without reflection.
func decodeHookText(text string, dst any) {
	switch d := dst.(type) {
	case *schema.PageInfo:
		if decodePageInfo(text, d) {
			return
		}
	case *[]schema.Feedback:
		if text == "[]" {
			*d = []schema.Feedback{}
			return
		}
	}
	_ = json.Unmarshal([]byte(text), dst)
}

// pageReader returns the runtime's page reader (runtime.WithPage) over the
// page and feedback hooks, either of which may be nil: both together
// through a pairReader where it can, else each that is set; nil if neither
// is.
func pageReader(fb, page *hookReader) func(context.Context) (schema.PageInfo, []schema.Feedback) {
	if pr := newPairReader(fb, page); pr != nil {
		return pr.read
	}
	if fb == nil && page == nil {
		return nil
	}
	return func(context.Context) (schema.PageInfo, []schema.Feedback) {
		var p schema.PageInfo
		var f []schema.Feedback
		if fb != nil {
			fb.readInto(&f)
		}
		if page != nil {
			page.readInto(&p)
		}
		return p, f
	}
}

// pairReader reads the feedback and page hooks together, where the runtime
// reads them both (runtime.WithPage): one
// JSON.stringify([feedbackHolder, pageHolder]) calls both, in that order,
// and serializes their values, one call into JS instead of two. Each hook
// then gets its index, "0" or "1", as toJSON's argument where a holder of
// its own passes "". Text equal to the last read (sameText) is not copied
// again, and its decoded values are given again; they are only read. A read that
// throws reads the two hooks apart instead, so that one failing hook does
// not hide the other's value.
type pairReader struct {
	fb, page *hookReader
	holder   safejs.Value // [fb.holder, page.holder]

	mu   sync.Mutex
	last safejs.Value // the last text read, a JS string, or undefined
	fbv  []schema.Feedback
	pgv  schema.PageInfo
}

// newPairReader returns nil where the two cannot be read together: a hook
// is missing, or the host's JSON.stringify does not call toJSON.
func newPairReader(fb, page *hookReader) *pairReader {
	if fb == nil || page == nil || fb.holder.Type() != safejs.TypeObject || page.holder.Type() != safejs.TypeObject {
		return nil
	}
	arr, err := jsParse.Invoke("[0,0]")
	if err != nil || arr.SetIndex(0, fb.holder) != nil || arr.SetIndex(1, page.holder) != nil {
		return nil
	}
	return &pairReader{fb: fb, page: page, holder: arr, last: safejs.Undefined()}
}

func (r *pairReader) read(context.Context) (schema.PageInfo, []schema.Feedback) {
	s, err := jsStringify.Invoke(r.holder)
	if err == nil && s.Type() == safejs.TypeString {
		r.mu.Lock()
		if sameText(r.last, s) {
			fb, p := r.fbv, r.pgv
			r.mu.Unlock()
			return p, fb
		}
		r.mu.Unlock()
		if text, err := s.String(); err == nil {
			if a, b, ok := splitPair(text); ok {
				var fb []schema.Feedback
				var p schema.PageInfo
				decodeHookText(a, &fb)
				decodeHookText(b, &p)
				r.mu.Lock()
				r.last, r.fbv, r.pgv = s, fb, p
				r.mu.Unlock()
				return p, fb
			}
		}
	}
	var fb []schema.Feedback
	var p schema.PageInfo
	r.fb.readInto(&fb)
	r.page.readInto(&p)
	return p, fb
}

// splitPair splits JSON.stringify's text of a two-element array, [a,b]
// (no whitespace), into the texts of a and b.
func splitPair(text string) (a, b string, ok bool) {
	if len(text) < 5 || text[0] != '[' || text[len(text)-1] != ']' {
		return "", "", false
	}
	depth, inString := 0, false
	for i := 1; i < len(text)-1; i++ {
		c := text[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				return text[1:i], text[i+1 : len(text)-1], true
			}
		}
	}
	return "", "", false
}

// textOf gives the Go text of the JS string s, copied only if it differs
// from the last one.
func (r *hookReader) textOf(s safejs.Value) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sameText(r.last, s) {
		return r.text
	}
	text, err := s.String()
	if err != nil {
		return ""
	}
	r.last, r.text = s, text
	return text
}

// decodePageInfo decodes what JSON.stringify makes of the usual page hook
// value, {"url":"…","title":"…"} with plain strings, as json.Unmarshal
// would, without reflection. Anything else (another key, an escape, a
// non-string) is left to json.Unmarshal: it reports false and leaves p.
func decodePageInfo(text string, p *schema.PageInfo) bool {
	var out schema.PageInfo
	if len(text) < 2 || text[0] != '{' {
		return false
	}
	i := 1
	if text[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := jsonmap.PlainString(text, i)
			if !ok || j >= len(text) || text[j] != ':' {
				return false
			}
			val, k, ok := jsonmap.PlainString(text, j+1)
			if !ok || k >= len(text) {
				return false
			}
			switch key {
			case "url":
				out.URL = val
			case "title":
				out.Title = val
			default:
				return false
			}
			i = k + 1
			if text[k] == '}' {
				break
			}
			if text[k] != ',' {
				return false
			}
		}
	}
	if i != len(text) {
		return false
	}
	*p = out
	return true
}

// declare(kind, specJSON, fns) → {"handle": n} or {"handle": n, "code": …}
// or {"error": …}.
func declare(args []safejs.Value) (any, error) {
	rt, err := pageRuntime()
	if err != nil {
		return nil, err
	}
	kind, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	text, err := argString(args, 1)
	if err != nil {
		return nil, err
	}
	fns := safejs.Undefined()
	if len(args) > 2 {
		fns = args[2]
	}
	var h *runtime.Handle
	switch kind {
	case "action":
		decl, err := actionOf(text, fns)
		if err != nil {
			return nil, err
		}
		h, err = rt.DeclareAction(decl)
		out, oerr := outcome(h, err)
		if m, ok := out.(map[string]any); ok && err == nil && !rt.SiteExposes(decl) {
			m["unexposed"] = true // the shim warns once per id
		}
		return out, oerr
	case "state":
		s, err := decodeSpec(text, pagespec.DecodeState)
		if err != nil {
			return nil, fmt.Errorf("pling.state: %w", err)
		}
		read := fnField(fns, "read")
		h, err = rt.DeclareState(runtime.State{Key: s.Key, Description: s.Description, Identity: s.Identity, Read: func(context.Context) (any, error) {
			if read.IsUndefined() {
				return nil, errors.New("no reader")
			}
			v, err := callFn(read)
			if err != nil {
				return nil, err
			}
			return toGo(v)
		}})
		return outcome(h, err)
	case "guide":
		spec, err := decodeSpec(text, pagespec.DecodeGuide)
		if err != nil {
			return nil, fmt.Errorf("pling.guide: %w", err)
		}
		g := runtime.Guide{Target: spec.Target, Label: spec.Label, Selector: spec.Selector, Identity: spec.Identity}
		h, err = rt.DeclareGuide(g)
		return outcome(h, err)
	case "region":
		spec, err := decodeSpec(text, pagespec.DecodeRegion)
		if err != nil {
			return nil, fmt.Errorf("pling.region: %w", err)
		}
		active := fnField(fns, "active")
		r := runtime.Region{ID: spec.ID, Title: spec.Title, Modal: spec.Modal, Identity: spec.Identity}
		if !active.IsUndefined() {
			r.Active = func(context.Context) bool {
				v, err := callFn(active)
				if err != nil {
					return false
				}
				b, _ := v.Truthy()
				return b
			}
		}
		h, err = rt.DeclareRegion(r)
		return outcome(h, err)
	case "records":
		spec, err := decodeSpec(text, pagespec.DecodeRecords)
		if err != nil {
			return nil, fmt.Errorf("pling.records: %w", err)
		}
		read := fnField(fns, "read")
		h, err = rt.DeclareRecords(runtime.Records{Kind: spec.Kind, Read: func(context.Context) ([]runtime.RecordItem, error) {
			if read.IsUndefined() {
				return nil, nil
			}
			v, err := callFn(read)
			if err != nil {
				return nil, err
			}
			s, err := jsStringify.Invoke(v)
			if err != nil {
				return nil, err
			}
			text, err := s.String()
			if err != nil {
				return nil, err
			}
			// By the exact json names of pagespec.Row, without
			// encoding/json's reflection (jsonmap.Rows).
			rows, err := jsonmap.Rows(text)
			if err != nil {
				return nil, err
			}
			out := make([]runtime.RecordItem, len(rows))
			for i, r := range rows {
				out[i] = runtime.RecordItem{ID: r.ID, Label: r.Label, Offscreen: r.Visible != nil && !*r.Visible}
			}
			return out, nil
		}})
		return outcome(h, err)
	case "hook":
		before, after := fnField(fns, "before"), fnField(fns, "after")
		hk := runtime.Hook{}
		if !before.IsUndefined() {
			hk.Before = func(_ context.Context, c *runtime.Call) string {
				v, err := callFn(before, callInfoJS(c))
				if err != nil {
					return "The hook failed"
				}
				if v.Type() == safejs.TypeString {
					s, _ := v.String()
					return s
				}
				if v.Type() == safejs.TypeBoolean {
					if b, _ := v.Bool(); !b {
						return "Blocked by a hook"
					}
				}
				return ""
			}
		}
		if !after.IsUndefined() {
			hk.After = func(_ context.Context, c *runtime.Call, value any) {
				_, _ = callFn(after, callInfoJS(c), mustJS(value))
			}
		}
		h, err = rt.AddHook(hk)
		return outcome(h, err)
	}
	return nil, fmt.Errorf("pling: unknown declaration kind %q", kind)
}

// outcome registers the handle and reports the declare result.
func outcome(h *runtime.Handle, err error) (any, error) {
	out := map[string]any{}
	if h != nil {
		page.Lock()
		page.next++
		page.handles[page.next] = h
		out["handle"] = page.next
		page.Unlock()
	}
	if err != nil {
		var pe *perr.Error
		if errors.As(err, &pe) {
			out["code"] = string(pe.Code())
			out["message"] = pe.Message()
		} else {
			out["error"] = authorText(err)
		}
	}
	return out, nil
}

func dispose(args []safejs.Value) (any, error) {
	id, err := argInt(args, 0)
	if err != nil {
		return nil, err
	}
	page.Lock()
	h := page.handles[id]
	delete(page.handles, id)
	page.Unlock()
	h.Dispose()
	return true, nil
}

// cancel(id[, session]) → whether an invoke in flight under that id and
// session token stopped before it ran (runtime.Runtime.Cancel): the call
// an agent gave up on.
func cancelRequest(args []safejs.Value) (any, error) {
	id, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	session, _ := argString(args, 1)
	rt, err := pageRuntime()
	if err != nil {
		return nil, err
	}
	return rt.Cancel(session, id), nil
}

func fnField(obj safejs.Value, name string) safejs.Value {
	if obj.Type() != safejs.TypeObject {
		return safejs.Undefined()
	}
	f, err := obj.Get(name)
	if err != nil || f.Type() != safejs.TypeFunction {
		return safejs.Undefined()
	}
	return f
}

func mustJS(v any) safejs.Value {
	j, err := toJS(v)
	if err != nil {
		return safejs.Undefined()
	}
	return j
}

// callInfoJS is the second argument of a JS handler and of a hook, who
// calls what: {action, capability, record?, requestId, step, subject?}, the
// object JSON.parse makes of json.Marshal's text of that map (keys in
// order), here written without reflection.
func callInfoJS(c *runtime.Call) safejs.Value {
	v, err := jsParse.Invoke(string(appendCallInfo(nil, c)))
	if err != nil {
		return safejs.Undefined()
	}
	return v
}

func appendCallInfo(b []byte, c *runtime.Call) []byte {
	b = append(b, `{"action":`...)
	b = schema.AppendQuoted(b, c.Action, false)
	b = append(b, `,"capability":`...)
	b = schema.AppendQuoted(b, c.Capability, false)
	if c.Record != "" {
		b = append(b, `,"record":`...)
		b = schema.AppendQuoted(b, c.Record, false)
	}
	b = append(b, `,"requestId":`...)
	b = schema.AppendQuoted(b, c.RequestID, false)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(c.Step), 10)
	if c.Subject != "" {
		b = append(b, `,"subject":`...)
		b = schema.AppendQuoted(b, c.Subject, false)
	}
	return append(b, '}')
}

// toExpectation is the runtime's expectation of a declared expect, with
// the predicate function pred (undefined for none).
func toExpectation(e *pagespec.Expect, pred safejs.Value) (*runtime.Expectation, error) {
	if e == nil {
		return nil, nil
	}
	x := &runtime.Expectation{State: e.State, Change: e.Change, TimeoutMs: e.TimeoutMs}
	if x.Change == "change" {
		x.Change = "any"
	}
	// equals: null is a value (HasEquals with Equals nil); absent is none.
	// The value is as the parser read it, numbers as json.Number.
	if e.Equals.Set {
		x.Equals, x.HasEquals = e.Equals.Value, true
	}
	if !pred.IsUndefined() {
		x.Predicate = func(before, after any) bool {
			v, err := callFn(pred, mustJS(before), mustJS(after))
			if err != nil {
				return false
			}
			b, _ := v.Truthy()
			return b
		}
	}
	return x, nil
}

// toAction is the runtime's declaration of a declared action, with the
// functions in fns: run, available, predicate (for expect), steps (an
// array of run functions) and stepPredicates.
func toAction(a *pagespec.Action, fns safejs.Value) (runtime.Action, error) {
	d := runtime.Action{ID: a.ID, Title: a.Title, Description: a.Description, Params: a.Params, Risk: schema.Risk(a.Risk),
		Approval: a.Approval, Region: a.Region, Record: a.Record, Identity: a.Identity, TimeoutMs: a.TimeoutMs}
	var err error
	if d.Expect, err = toExpectation(a.Expect, fnField(fns, "predicate")); err != nil {
		return d, err
	}
	if run := fnField(fns, "run"); !run.IsUndefined() {
		d.Run = jsHandler(run)
	}
	approvalFns(&d, fns)
	if av := fnField(fns, "available"); !av.IsUndefined() {
		d.Available = func(_ context.Context, record string) runtime.Availability {
			var args []any
			if record != "" {
				args = append(args, record)
			}
			v, err := callFn(av, args...)
			if err != nil {
				return runtime.Unavailable(runtime.AvailabilityCheckFailed)
			}
			switch v.Type() {
			case safejs.TypeString:
				s, _ := v.String()
				return runtime.Unavailable(s)
			case safejs.TypeBoolean:
				if b, _ := v.Bool(); b {
					return runtime.Available
				}
				return runtime.Unavailable("")
			}
			if b, _ := v.Truthy(); b {
				return runtime.Available
			}
			return runtime.Unavailable("")
		}
	}
	var steps, preds safejs.Value = safejs.Undefined(), safejs.Undefined()
	if fns.Type() == safejs.TypeObject {
		steps, _ = fns.Get("steps")
		preds, _ = fns.Get("stepPredicates")
	}
	for i, s := range a.Steps {
		st := runtime.Step{Title: s.Title}
		if steps.Type() == safejs.TypeObject {
			if f, err := steps.Index(i); err == nil && f.Type() == safejs.TypeFunction {
				st.Run = jsHandler(f)
			}
		}
		pred := safejs.Undefined()
		if preds.Type() == safejs.TypeObject {
			if f, err := preds.Index(i); err == nil && f.Type() == safejs.TypeFunction {
				pred = f
			}
		}
		if st.Expect, err = toExpectation(s.Expect, pred); err != nil {
			return d, err
		}
		d.Steps = append(d.Steps, st)
	}
	if a.Handoff != nil {
		d.Handoff = &runtime.Handoff{Prompt: a.Handoff.Prompt, TimeoutMs: a.Handoff.TimeoutMs}
	}
	return d, nil
}

// approvalFns reads the approval functions of an action (pling.js puts
// them in fns): approvalFor(input, record) → true, false or a reason;
// approvalSummary(input, record) → the text the person approves; and
// paramOrder, the params' names as declared.
func approvalFns(d *runtime.Action, fns safejs.Value) {
	if f := fnField(fns, "approvalFor"); !f.IsUndefined() {
		d.ApprovalFor = func(_ context.Context, input map[string]any, record string) (bool, string, error) {
			v, err := callFn(f, mustJS(input), record)
			if err != nil {
				return true, "", err
			}
			if v.Type() == safejs.TypeString {
				s, _ := v.String()
				return true, s, nil
			}
			b, _ := v.Truthy()
			return b, "", nil
		}
	}
	if f := fnField(fns, "approvalSummary"); !f.IsUndefined() {
		d.ApprovalSummary = func(_ context.Context, input map[string]any, record string) (string, error) {
			v, err := callFn(f, mustJS(input), record)
			if err != nil {
				return "", err
			}
			if v.Type() != safejs.TypeString {
				return "", errors.New("the approval summary is not a string")
			}
			return v.String()
		}
	}
	if fns.Type() != safejs.TypeObject {
		return
	}
	if o, err := fns.Get("paramOrder"); err == nil && o.Type() == safejs.TypeObject {
		if g, err := toGo(o); err == nil {
			if names, ok := g.([]any); ok {
				for _, n := range names {
					if s, ok := n.(string); ok {
						d.ParamOrder = append(d.ParamOrder, s)
					}
				}
			}
		}
	}
}

// jsHandler calls a JS handler as run(input, call): input has the record of
// a row action put back, so `run: ({record}) => …` works. A thrown
// exception or a rejected promise is the handler's failure
// (EXECUTION_FAILED); the module keeps serving.
func jsHandler(fn safejs.Value) runtime.Handler {
	return func(_ context.Context, c *runtime.Call) (any, error) {
		input := make(map[string]any, len(c.Input)+1)
		for k, v := range c.Input {
			input[k] = v
		}
		if c.Record != "" {
			input["record"] = c.Record
		}
		v, err := callHandler(fn, input, c)
		if err != nil {
			var je safejs.Error
			if errors.As(err, &je) {
				return nil, errors.New(je.Error())
			}
			return nil, err
		}
		if ferr, ok := pageFailure(v); ok {
			return nil, ferr
		}
		return toGo(v)
	}
}

// pageFailure reads a handler's business failure: the value of
// pling.fail(code, message, details), returned, thrown or rejected (the
// shim turns the last two into a returned one). It is marked by an own
// property __plingFailure === true.
func pageFailure(v safejs.Value) (error, bool) {
	if v.Type() != safejs.TypeObject {
		return nil, false
	}
	mark, err := v.Get("__plingFailure")
	if err != nil || mark.Type() != safejs.TypeBoolean {
		return nil, false
	}
	if b, _ := mark.Bool(); !b {
		return nil, false
	}
	str := func(k string) string {
		x, err := v.Get(k)
		if err != nil || x.Type() != safejs.TypeString {
			return ""
		}
		s, _ := x.String()
		return s
	}
	var details map[string]any
	if d, err := v.Get("details"); err == nil && d.Type() == safejs.TypeObject {
		if g, err := toGo(d); err == nil {
			details, _ = g.(map[string]any)
		}
	}
	warning, ferr := runtime.PageFailure(str("code"), str("message"), details)
	if warning != "" {
		consoleWarn(warning)
	}
	return ferr, true
}

// callHandler calls fn(input, call) and waits for its value. Where the
// host has Reflect.apply, both arguments come from one JSON.parse of
// [input, call] and the call is one more hop into JS; else each argument is
// parsed on its own and fn invoked with them.
func callHandler(fn safejs.Value, input map[string]any, c *runtime.Call) (safejs.Value, error) {
	inJSON := []byte("{}") // json.Marshal's text of an empty map
	if len(input) > 0 {
		var err error
		if inJSON, err = json.Marshal(input); err != nil {
			return safejs.Undefined(), err
		}
	}
	if jsApply.Type() != safejs.TypeFunction {
		in, err := jsParse.Invoke(string(inJSON))
		if err != nil {
			return safejs.Undefined(), err
		}
		return callFn(fn, in, callInfoJS(c))
	}
	b := make([]byte, 0, len(inJSON)+160)
	b = append(b, '[')
	b = append(b, inJSON...)
	b = append(b, ',')
	b = append(appendCallInfo(b, c), ']')
	args, err := jsParse.Invoke(string(b))
	if err != nil {
		return safejs.Undefined(), err
	}
	v, err := jsApply.Invoke(fn, safejs.Undefined(), args)
	if err != nil {
		return safejs.Undefined(), err
	}
	return await(v)
}

// jsHandoff is the shim's handoff UI: handoff(requestJSON) resolves to
// "done" or "cancel"; it is never awaited past the timeout.
type jsHandoff struct{ fn safejs.Value }

func (h jsHandoff) Show(ctx context.Context, req runtime.HandoffRequest) <-chan runtime.HandoffOutcome {
	ch := make(chan runtime.HandoffOutcome, 1)
	go func() {
		v, err := callFn(h.fn, mustJS(map[string]any{"capability": req.Capability, "record": req.Record, "title": req.Title,
			"prompt": req.Prompt, "timeoutMs": req.TimeoutMs}), abortSignal(ctx))
		if err != nil {
			return
		}
		s, _ := v.String()
		switch s {
		case "done":
			ch <- runtime.HandoffDone
		case "cancel":
			ch <- runtime.HandoffCancel
		}
	}()
	return ch
}

// jsApprover is the shim's approval UI: approve(challenge) resolves to a
// decision {binding, approved}.
type jsApprover struct{ fn safejs.Value }

func (a jsApprover) Approve(ctx context.Context, c schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	ch := make(chan schema.SurfaceApprovalDecision, 1)
	go func() {
		v, err := callFn(a.fn, mustJS(c), abortSignal(ctx))
		if err != nil {
			return
		}
		g, err := toGo(v)
		if err != nil {
			return
		}
		b, _ := json.Marshal(g)
		var d schema.SurfaceApprovalDecision
		if json.Unmarshal(b, &d) == nil {
			ch <- d
		}
	}()
	return ch
}

// abortSignal gives JS an AbortSignal that aborts when ctx ends, so the
// UI can close itself on a timeout or a cancel. It is a real one (of an
// AbortController) so that a hook that looks later — the default UI,
// after ui.js has loaded — sees signal.aborted, and listeners added at
// any time fire; assigning signal.onabort works as before. Without
// AbortController it is a plain {onabort} object whose callback runs
// when ctx ends.
func abortSignal(ctx context.Context) safejs.Value {
	if ctor, err := global.Get("AbortController"); err == nil && ctor.Type() == safejs.TypeFunction {
		if ac, err := ctor.New(); err == nil {
			if sig, err := ac.Get("signal"); err == nil {
				go func() {
					<-ctx.Done()
					_, _ = ac.Call("abort")
				}()
				return sig
			}
		}
	}
	obj, err := newObject(nil)
	if err != nil {
		return safejs.Undefined()
	}
	go func() {
		<-ctx.Done()
		if f, err := obj.Get("onabort"); err == nil && f.Type() == safejs.TypeFunction {
			_, _ = f.Invoke()
		}
	}()
	return obj
}

// uiText is the default handoff and approval UI's own strings
// (js-shim/ui.js); everything else it shows comes from the error registry.
// {time} is replaced by the time left.
var uiText = map[string]perr.Text{
	"ui.handoffTitle":  {En: "Your turn", Zh: "需要您来操作"},
	"ui.approvalTitle": {En: "Approve this action?", Zh: "是否批准此操作？"},
	// Who asks for an approval ({agent}: the session's agent name).
	"ui.agentAsks":      {En: "An AI agent is asking to do this.", Zh: "一个 AI 智能体请求执行此操作。"},
	"ui.agentAsksNamed": {En: "The AI agent “{agent}” is asking to do this.", Zh: "AI 智能体“{agent}”请求执行此操作。"},
	"ui.done":           {En: "Done", Zh: "完成"},
	"ui.cancel":         {En: "Cancel", Zh: "取消"},
	"ui.approve":        {En: "Approve", Zh: "批准"},
	"ui.deny":           {En: "Deny", Zh: "拒绝"},
	"ui.timeLeft":       {En: "Time left: {time}", Zh: "剩余时间：{time}"},
	"ui.expired":        {En: "Time is up", Zh: "时间已到"},
	// The approval dialog's input list and queue ({n}: a count).
	"ui.waiting":   {En: "{n} more waiting", Zh: "还有 {n} 个等待批准"},
	"ui.empty":     {En: "(empty)", Zh: "（空）"},
	"ui.cut":       {En: "cut: {n} characters in all", Zh: "已截断：共 {n} 个字符"},
	"ui.escaped":   {En: "shown escaped: \\u{…} stands for a hidden or control character", Zh: "已转义显示：\\u{…} 表示隐藏字符或控制字符"},
	"ui.moreInput": {En: "{n} more parameters not shown", Zh: "另有 {n} 个参数未显示"},
}

// messages(lang) → JSON text: every i18n key of the error registry
// (errors.<CODE> and errors.<CODE>.action) and the UI strings, in lang, a
// BCP 47 tag (Text.In: Chinese tags get Chinese, anything else English).
func messages(args []safejs.Value) (any, error) {
	lang, _ := argString(args, 0)
	out := make(map[string]string, len(uiText)+128)
	for _, ns := range perr.Namespaces() {
		for _, c := range perr.Codes(ns) {
			e, ok := perr.Lookup(c)
			if !ok {
				continue
			}
			out[e.MessageKey()] = e.Message.In(lang)
			out[e.ActionKey()] = e.Action.In(lang)
		}
	}
	for k, t := range uiText {
		out[k] = t.In(lang)
	}
	b, err := json.Marshal(out)
	return string(b), err
}
