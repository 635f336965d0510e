package runtime

import (
	"fmt"
	"strings"

	perr "github.com/pling-go/pling/errors"
)

// pageFailureCodes are the registry codes a page handler may answer with
// (pling.fail, a thrown pling.Failure): the business outcomes a handler
// decides. The others (DUPLICATE_ACTION_ID, LOOP_DETECTED, STEP_FAILED,
// HANDOFF_*, …) report what the runtime saw, not what page code decided.
var pageFailureCodes = map[perr.Code]bool{
	perr.InvalidParams:     true,
	perr.PermissionDenied:  true,
	perr.ActionUnavailable: true,
	perr.ExecutionFailed:   true,
}

// pageFailure is the error a page handler's business failure becomes
// (docs/page-api.md §2.9): code is one of INVALID_PARAMS,
// PERMISSION_DENIED, ACTION_UNAVAILABLE or EXECUTION_FAILED, message is
// for the agent. For INVALID_PARAMS, details may name the parameter as
// {path: "/name"} or {paths: [...]}, or list {violations: [{path,
// reason}]}; they become the violations list the runtime's own
// INVALID_PARAMS carries, each path a JSON pointer. Other details are
// dropped: the page's values never reach the agent unasked.
//
// A code that is not one of these is EXECUTION_FAILED with the message,
// and warning says so for the page's author ("" when all is well).
func pageFailure(code, message string, details map[string]any) (warning string, err error) {
	c := perr.Code(strings.TrimSpace(code))
	if !pageFailureCodes[c] {
		warning = fmt.Sprintf("pling.fail: %q is not a code a handler can give (INVALID_PARAMS, PERMISSION_DENIED, ACTION_UNAVAILABLE or EXECUTION_FAILED); the agent was told EXECUTION_FAILED", cutBytes(code, 64))
		c = perr.ExecutionFailed
	}
	if c != perr.InvalidParams {
		return warning, perr.New(c, message, nil)
	}
	var vs []violation
	add := func(path any, reason any) {
		p, _ := path.(string)
		if p == "" || len(vs) >= maxViolations {
			return
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		r, _ := reason.(string)
		if r == "" {
			r = message
		}
		if r == "" {
			r = "is not valid"
		}
		vs = append(vs, violation{Path: cutBytes(p, 256), Reason: cutBytes(r, 500)})
	}
	add(details["path"], nil)
	if ps, ok := details["paths"].([]any); ok {
		for _, p := range ps {
			add(p, nil)
		}
	}
	if list, ok := details["violations"].([]any); ok {
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				add(m["path"], m["reason"])
			}
		}
	}
	var d map[string]any
	if len(vs) > 0 {
		d = map[string]any{"violations": vs}
	}
	return warning, perr.New(c, message, d)
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
