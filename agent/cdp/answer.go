package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// MaxAnswer bounds what this package reads of one page answer (a Surface
// response, a WebMCP tool's answer, a list the page gives), in UTF-16
// code units as the page counts a string's length: 4 Mi, eight times the
// runtime's describe bound. An answer over it is refused unread.
const MaxAnswer = 4 << 20

// boundedJS wraps an async function body whose result is the page's
// answer as a string, so that the page cannot make this side read more
// than limit code units of it. The page's script may have replaced any
// function or prototype the body calls, and so decides what the answer
// is, but the wrapper uses none: typeof and the length of a primitive
// string, a comparison and array literals are the language's own, which
// no script can redefine. So an answer over limit leaves the page as its
// length alone; a throw as a bounded message of the page's (or none);
// anything else that is not a string as its type.
func boundedJS(body string, limit int) string {
	l := strconv.Itoa(limit)
	return `(async () => {
  let r;
  try { r = await (async () => {` + body + `})(); } catch (e) {
    let m = typeof e === "string" ? e : null;
    if (m === null) { try { const x = e && e.message; if (typeof x === "string") m = x; } catch (_) {} }
    return ["threw", typeof m === "string" && m.length <= 1000 ? m : ""];
  }
  if (typeof r !== "string") return ["type", typeof r];
  if (r.length > ` + l + `) return ["over", r.length];
  return r;
})()`
}

// readBounded reads what boundedJS gave: the page's answer, or an error
// that says why it was not read.
func readBounded(raw []byte, limit int) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if len(s) > 3*limit { // a UTF-16 code unit is at most 3 bytes of UTF-8
			return "", fmt.Errorf("the page's answer is %d bytes, over the bound of %d", len(s), 3*limit)
		}
		return s, nil
	}
	var why [2]any
	if err := json.Unmarshal(raw, &why); err != nil {
		return "", errors.New("the page's answer could not be read")
	}
	switch why[0] {
	case "threw":
		m, _ := why[1].(string)
		if m == "" {
			return "", &PageThrew{Message: "(no message)"}
		}
		return "", &PageThrew{Message: m}
	case "over":
		n, _ := why[1].(float64)
		return "", &AnswerTooLarge{Length: int64(n), Limit: limit}
	}
	return "", fmt.Errorf("the page answered a %v, not a string", why[1])
}

// AnswerTooLarge is a page answer over its bound, which was not read: the
// page's code ran, its answer is unknown.
type AnswerTooLarge struct {
	Length int64 // in UTF-16 code units, as the page counted it
	Limit  int
}

func (e *AnswerTooLarge) Error() string {
	return fmt.Sprintf("the page's answer is %d characters, over the bound of %d: not read", e.Length, e.Limit)
}

// PageThrew is a page script's throw while it answered: its message as
// the page wrote it (at most 1,000 characters), which is the page's text.
type PageThrew struct{ Message string }

func (e *PageThrew) Error() string { return "the page threw: " + strconv.Quote(e.Message) }

// evalBounded evaluates boundedJS(body, limit) in the tab of ctx (in the
// context with the system-unique id unique, when not "") and returns the
// page's answer.
func evalBounded(ctx context.Context, body string, limit int, unique string) (string, error) {
	yes := true
	res, err := chromedp.Call(ctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: boundedJS(body, limit),
		AwaitPromise: &yes, ReturnByValue: &yes, UniqueContextID: unique})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return "", errors.New("the page's answer could not be read")
	}
	return readBounded(res.Result.Value, limit)
}
