//go:build js && wasm

// The page configuration: init(configJSON, hooks) builds the page's runtime from the config and the shim's hooks.

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema/pagespec"
	"github.com/pling-go/pling/wasm/internal/tagfloor"
)

// initPage builds the page runtime once: init(configJSON, hooks, tag?).
// tag is a copy of the script tag's data attributes (its dataset);
// configure may narrow what they set, never widen it (tagfloor).
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
	if len(args) > 2 {
		var notes []string
		c, notes = tagfloor.Apply(c, tagOptions(args[2]))
		for _, n := range notes {
			consoleWarn(n)
		}
	}
	// A page says in describe which of its actions it does not expose
	// (docs/page-api.md §2); fixture pages do not, so conformance is as
	// before.
	opts := []runtime.Option{runtime.WithExpose(c.Expose...), pagebridge.WithUnexposedFeedback[runtime.Option]()}
	if c.Anonymous != nil {
		opts = append(opts, runtime.WithAnonymous(*c.Anonymous...))
	}
	if c.Origin != "" {
		opts = append(opts, runtime.WithOrigin(c.Origin))
	}
	if c.Subject != nil {
		// The person signed in on the site: a session for anyone else is
		// refused (docs/authority.md "What the site's server checks").
		who := *c.Subject
		opts = append(opts, runtime.WithSubject(func(context.Context) (string, error) { return who, nil }))
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
	opts = append(opts, pagebridge.WithAuthorWarning[runtime.Option](consoleWarn))
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
		// A delegated session's invoke limit is kept at the authority,
		// one bucket per session, so the page's tabs and reloads share
		// its burst (docs/authority.md "Invoke limit").
		rl := runtime.DefaultRateLimit()
		if r := c.RateLimit; r != nil {
			rl = runtime.RateLimit{Describe: runtime.Bucket(r.Describe), Invoke: runtime.Bucket(r.Invoke)}
		}
		opts = append(opts, runtime.WithLimiter(f.Limiter(rl)))
		if c.Approvals == "authority" {
			// The person approves on the authority's screen; the in-page
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
			// waiting({id, capability, kind, timeoutMs, outside?}): a person is asked
			// (the shim tells the page and the agent's transport). Not
			// awaited.
			opts = append(opts, runtime.WithWaiting(func(w runtime.Waiting) {
				m := map[string]any{"id": w.RequestID, "capability": w.Capability, "kind": w.Kind, "timeoutMs": w.TimeoutMs}
				if w.Outside {
					m["outside"] = true // on the authority's screen: the agent's browser need not be seen
				}
				_, _ = f.Invoke(mustJS(m))
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

// tagOptions reads what the script tag's data attributes (its dataset)
// set of the configuration: data-expose, data-anonymous (a list when
// present, even empty), data-authority, data-approvals and data-subject
// (present, even empty: checked).
func tagOptions(v safejs.Value) pagespec.Config {
	var tag pagespec.Config
	if v.Type() != safejs.TypeObject {
		return tag
	}
	str := func(k string) (string, bool) {
		x, err := v.Get(k)
		if err != nil || x.Type() != safejs.TypeString {
			return "", false
		}
		s, err := x.String()
		return s, err == nil
	}
	if s, ok := str("expose"); ok {
		tag.Expose = tagfloor.List(s)
	}
	if s, ok := str("anonymous"); ok {
		l := tagfloor.List(s)
		tag.Anonymous = &l
	}
	tag.Authority, _ = str("authority")
	tag.Approvals, _ = str("approvals")
	if s, ok := str("subject"); ok {
		tag.Subject = &s
	}
	return tag
}
