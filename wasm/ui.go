//go:build js && wasm

// The handoff and approval UI bridge: the shim's hooks, the abort signal they watch, and the UI's strings.

package main

import (
	"context"
	"encoding/json"

	"github.com/hack-pad/safejs"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

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
