package runtime

import (
	"fmt"
	"strings"

	"github.com/pling-go/pling/schema"
)

// withUnexposedFeedback makes describe say, in its context's feedback, which
// declared actions the site allowlist (WithExpose) exposes to no caller: a
// page whose author forgot data-expose, or spelled a pattern that matches
// nothing, learns it from the first describe instead of from an empty
// list (RATIONALE "Why does a page say which actions it does not
// expose?"). The page bridge turns it on; fixture pages, and so the
// conformance suite, run without it (pagebridge.WithUnexposedFeedback).
func withUnexposedFeedback() Option {
	return func(cfg *config) { cfg.unexposedFeedback = true }
}

// siteExposes reports whether the site allowlist lets any caller reach the
// capability an action declares (its id, or id@kind for a row action). A
// session's scope may narrow that further; it can never widen it.
func (rt *Runtime) siteExposes(a Action) bool {
	return MatchAny(rt.cfg.gate.expose, capabilityIDOf(&a))
}

// unexposedFeedback is the feedback line for the declared capabilities
// the site allowlist exposes to nobody, or false when there are none. It
// gives their number and the patterns, never their ids: a description
// names only what it exposes (spec: the intersection is described), and
// the page's author reads the ids on the console, where the shim warns
// once per id.
func (rt *Runtime) unexposedFeedback(snap *snapshot) (schema.Feedback, bool) {
	n := 0
	for _, c := range snap.caps {
		if !MatchAny(rt.cfg.gate.expose, c.id) {
			n++
		}
	}
	if n == 0 {
		return schema.Feedback{}, false
	}
	return schema.Feedback{Level: "warning", Message: fmt.Sprintf(
		"%d declared action(s) are not exposed by the site allowlist (data-expose / expose: %s); the page's console names them",
		n, patternsText(rt.cfg.gate.expose))}, true
}

// patternsText renders the site allowlist for a message.
func patternsText(patterns []string) string {
	if len(patterns) == 0 {
		return "none"
	}
	return `"` + strings.Join(patterns, " ") + `"`
}
