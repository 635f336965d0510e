package runtime

import (
	"errors"
	"fmt"
	"strings"

	perr "github.com/pling-go/pling/errors"
)

// A page's reader (records, state) or availability check that fails costs
// only its own declaration: describe lists the rest and names the failure
// with the page's own error text (a reader's in the context's feedback, a
// check's as the action's unavailable reason), and lint tells the author (docs/page-api.md §2.10; RATIONALE "Why does a
// failing reader cost only its own declaration?").

// maxPageSays bounds the page's error text quoted in a reason or a lint
// line, in characters.
const maxPageSays = 200

// pageSays is the page's own text of a failure: its first line (never a
// stack), with anything that looks like a credential redacted, bounded.
func pageSays(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "" {
		s = "an error without a message"
	}
	return cut(perr.RedactString(s), maxPageSays)
}

// panicError is the error of a page's Go reader that panicked: the panic's
// text when it is an error or a string, else only that it panicked.
func panicError(r any) error {
	switch v := r.(type) {
	case error:
		return fmt.Errorf("panicked: %w", v)
	case string:
		return errors.New("panicked: " + v)
	}
	return errors.New("panicked")
}

// recordsFailed is the feedback of a records kind whose reader failed.
func recordsFailed(kind string, err error) string {
	return fmt.Sprintf("Declaration mistake: the records reader of %q failed, so its rows are not listed: %s", kind, pageSays(err))
}

// stateFailed is the feedback of a state whose reader failed; the state
// reads null.
func stateFailed(key string, err error) string {
	return fmt.Sprintf("Declaration mistake: the reader of the state %q failed, so it reads null: %s", key, pageSays(err))
}

// availabilityFailed is the reason of an availability check that threw or
// panicked, with the page's text when there is one.
func availabilityFailed(text string) string {
	if text == "" {
		return availabilityCheckFailed
	}
	return availabilityCheckFailed + ": " + text
}

// checkFailed is the availability of an action whose check failed (threw,
// rejected): unavailable, with availabilityCheckFailed and the page's text
// of err as the reason. lint reports it to the page's author.
func checkFailed(err error) Availability {
	return Unavailable(availabilityFailed(pageSays(err)))
}

// checkFailedText is the page's text in an availability reason that
// checkFailed or checkAvailable gave, and whether the reason is one.
func checkFailedText(reason string) (string, bool) {
	if reason == availabilityCheckFailed {
		return "", true
	}
	text, ok := strings.CutPrefix(reason, availabilityCheckFailed+": ")
	return text, ok
}
