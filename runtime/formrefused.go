package runtime

import (
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/pagebridge"
)

// maxFormMessage bounds, in characters, the page's message that one
// violation quotes.
const maxFormMessage = 150

// formRefused is the failure of a markup form whose submit the browser's
// constraint validation blocked: INVALID_PARAMS with a violation per
// field, at its param's path, each quoting what the page tells a person
// ("the page says …", a JSON string, cut), so the page's own message
// reaches the agent instead of an expectation that did not happen.
// Fields without a name, and the later controls of a name already listed
// (the radios of one group), are left out; at most maxViolations are
// listed.
func formRefused(fields []pagebridge.FormField) error {
	var vs []violation
	seen := map[string]bool{}
	for _, f := range fields {
		if f.Name == "" || seen[f.Name] || len(vs) >= maxViolations {
			continue
		}
		seen[f.Name] = true
		reason := "is not valid"
		if f.Message != "" {
			reason = string(jsonvalue.AppendQuoted([]byte("is not valid: the page says "), cut(f.Message, maxFormMessage), false))
		}
		vs = append(vs, violation{Path: pointer("", cut(f.Name, 128)), Reason: reason})
	}
	var d map[string]any
	if len(vs) > 0 {
		d = map[string]any{"violations": vs}
	}
	return perr.New(perr.InvalidParams, "The page's form did not accept the input", d)
}
