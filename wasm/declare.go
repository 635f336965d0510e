//go:build js && wasm

// Declarations: declare and dispose, and decoding a declared action, expectation and its approval functions.

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hack-pad/safejs"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/schema/pagespec"
	"github.com/pling-go/pling/wasm/internal/jsonmap"
)

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
		if m, ok := out.(map[string]any); ok && err == nil && !pagebridge.SiteExposes(rt, decl) {
			m["unexposed"] = true // the shim warns once per id
		}
		return out, oerr
	case "state":
		s, err := decodeSpec(text, pagespec.DecodeState)
		if err != nil {
			return nil, fmt.Errorf("pling.state: %w", err)
		}
		read := fnField(fns, "read")
		h, err = rt.DeclareState(runtime.State{Key: s.Key, Description: s.Description, Identity: s.Identity, Markup: s.Markup, Read: func(context.Context) (any, error) {
			if read.IsUndefined() {
				return nil, errors.New("no reader")
			}
			v, err := callFn(read)
			if err != nil {
				return nil, pageError(err)
			}
			return toGo(v)
		}})
		return outcome(h, err)
	case "guide":
		spec, err := decodeSpec(text, pagespec.DecodeGuide)
		if err != nil {
			return nil, fmt.Errorf("pling.guide: %w", err)
		}
		g := runtime.Guide{Target: spec.Target, Label: spec.Label, Selector: spec.Selector, Identity: spec.Identity, Markup: spec.Markup}
		h, err = rt.DeclareGuide(g)
		return outcome(h, err)
	case "region":
		spec, err := decodeSpec(text, pagespec.DecodeRegion)
		if err != nil {
			return nil, fmt.Errorf("pling.region: %w", err)
		}
		active := fnField(fns, "active")
		r := runtime.Region{ID: spec.ID, Title: spec.Title, Modal: spec.Modal, Identity: spec.Identity, Markup: spec.Markup}
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
				return nil, pageError(err)
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
// array of run functions), stepPredicates and handoffResult.
func toAction(a *pagespec.Action, fns safejs.Value) (runtime.Action, error) {
	d := runtime.Action{ID: a.ID, Title: a.Title, Description: a.Description, Params: a.Params, Risk: schema.Risk(a.Risk),
		Approval: a.Approval, Region: a.Region, Record: a.Record, Identity: a.Identity, TimeoutMs: a.TimeoutMs, Markup: a.Markup}
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
				return pagebridge.CheckFailed[runtime.Availability](pageError(err))
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
	steps, preds := safejs.Undefined(), safejs.Undefined()
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
		if res := fnField(fns, "handoffResult"); !res.IsUndefined() {
			d.Handoff.Result = jsHandler(res) // handoff.result, read once the person is done
		}
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
