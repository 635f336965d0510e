//go:build js && wasm

// Running actions: calling the page's JS handlers, reading their failures, and cancelling a call in flight.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/runtime"
)

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

// callInfoJS is the second argument of a JS handler and of a hook, who
// calls what: {action, capability, record?, requestId, step, subject?,
// session?, approval?, headers?}, headers (with a session) holding the session token and the
// approval under the names the site's server reads them by
// (follow.SessionHeader, follow.ApprovalHeader), so a handler forwards
// them with fetch(url, {headers: call.headers}); the
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
	b = jsonvalue.AppendQuoted(b, c.Action, false)
	b = append(b, `,"capability":`...)
	b = jsonvalue.AppendQuoted(b, c.Capability, false)
	if c.Record != "" {
		b = append(b, `,"record":`...)
		b = jsonvalue.AppendQuoted(b, c.Record, false)
	}
	b = append(b, `,"requestId":`...)
	b = jsonvalue.AppendQuoted(b, c.RequestID, false)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(c.Step), 10)
	if c.Subject != "" {
		b = append(b, `,"subject":`...)
		b = jsonvalue.AppendQuoted(b, c.Subject, false)
	}
	if c.Session != "" {
		b = append(b, `,"session":`...)
		b = jsonvalue.AppendQuoted(b, c.Session, false)
	}
	if c.Approval != "" {
		b = append(b, `,"approval":`...)
		b = jsonvalue.AppendQuoted(b, c.Approval, false)
	}
	if c.Session != "" {
		b = append(b, `,"headers":{"`+follow.SessionHeader+`":`...)
		b = jsonvalue.AppendQuoted(b, c.Session, false)
		if c.Approval != "" {
			b = append(b, `,"`+follow.ApprovalHeader+`":`...)
			b = jsonvalue.AppendQuoted(b, c.Approval, false)
		}
		b = append(b, '}')
	}
	return append(b, '}')
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
		if str("code") == "INVALID_PARAMS" {
			if ferr, ok := formRefused(d); ok {
				return ferr, true
			}
		}
		if g, err := toGo(d); err == nil {
			details, _ = g.(map[string]any)
		}
	}
	warning, ferr := pagebridge.PageFailure(str("code"), str("message"), details)
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
