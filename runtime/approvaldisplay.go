package runtime

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/runtime/internal/canon"
	"github.com/pling-go/pling/schema"
)

// The bounds of what an approval challenge shows of the input
// (RATIONALE "What does the approval dialog show of the input?").
const (
	maxApprovalFields = 20  // parameters listed; More counts the rest
	maxApprovalValue  = 200 // characters of a value or record label
	maxApprovalTitle  = 80  // characters of a parameter's title
	maxApprovalName   = 64  // characters of a parameter's name or the agent's
	// maxApprovalSummary bounds the page's summary (ApprovalSummary).
	maxApprovalSummary = 500
)

// approvalDisplay renders the bound input for a person: the record with
// its label, and every parameter by name with its title and value,
// redacted (the errors package's rules), escaped and bounded. It is done
// here, once, so that every host and every approver shows the same text.
func (in *invocation) approvalDisplay(ch *schema.SurfaceApprovalChallenge) {
	if in.call.Record != "" {
		kind := ""
		if in.cap.fold != nil {
			kind = in.cap.fold.kind
		}
		label := displayText(perr.RedactValue("label", in.recordLabel), maxApprovalValue)
		ch.Record = &schema.ApprovalRecord{Kind: kind, ID: in.call.Record, Label: label.text}
	}
	ch.Input, ch.More = displayFields(in.input, in.act.ParamOrder, func(name string) string {
		if p, ok := in.act.Params[name]; ok && strings.TrimSpace(p.Description) != "" {
			return strings.TrimSpace(p.Description)
		}
		return name
	})
}

// displayFields renders every parameter of input (the record aside) by
// name, in order (declared names first, then the rest sorted), with the
// title title gives it and its value, redacted, escaped and bounded; more
// counts those left out by the bound.
func displayFields(input map[string]any, order []string, title func(name string) string) (fields []schema.ApprovalField, more int) {
	names := paramOrder(input, order)
	if len(names) > maxApprovalFields {
		more = len(names) - maxApprovalFields
		names = names[:maxApprovalFields]
	}
	for _, name := range names {
		v := input[name]
		red := perr.RedactValue(name, v)
		shown := displayText(red, maxApprovalValue)
		f := schema.ApprovalField{Value: shown.text, Escaped: shown.escaped, Cut: shown.cut, Redacted: !sameJSON(v, red)}
		if shown.cut {
			f.Length = shown.length
		}
		f.Name = displayText(name, maxApprovalName).text
		f.Title = displayText(title(name), maxApprovalTitle).text
		fields = append(fields, f)
	}
	return fields, more
}

// sameJSON reports whether a and b have the same canonical JSON.
func sameJSON(a, b any) bool {
	x, err1 := canon.Marshal(a)
	y, err2 := canon.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// shownText is a value as a person sees it.
type shownText struct {
	text    string
	escaped bool // written with escapes
	cut     bool // cut to the bound, ending with "…"
	length  int  // characters of the full text, before escaping
}

// displayText renders v: a string as itself, anything else as canonical
// JSON (the spelling the digest binds). When any character would not
// show faithfully, the text is written escaped: such a character as
// \u{XXXX} (\n, \t, \r for those), each backslash doubled. A text over
// max characters (0: no bound) is cut, without splitting an escape, and
// ends with "…".
func displayText(v any, max int) shownText {
	s, ok := v.(string)
	if !ok {
		b, err := canon.Marshal(v)
		if err != nil {
			return shownText{text: "[unencodable]"}
		}
		s = string(b)
	}
	out := shownText{length: utf8.RuneCountInString(s)}
	for _, r := range s {
		if unshowable(r) || r == utf8.RuneError {
			out.escaped = true
			break
		}
	}
	var toks []string
	total := 0
	for _, r := range s {
		tok := string(r)
		if out.escaped {
			tok = escapeRune(r)
		}
		toks = append(toks, tok)
		total += utf8.RuneCountInString(tok)
		if max > 0 && total > max {
			break // cut: the rest is not shown
		}
	}
	if max <= 0 || total <= max {
		out.text = strings.Join(toks, "")
		return out
	}
	var b strings.Builder
	n := 0
	for _, tok := range toks {
		k := utf8.RuneCountInString(tok)
		if n+k > max-1 {
			break
		}
		b.WriteString(tok)
		n += k
	}
	b.WriteString("…")
	out.text, out.cut = b.String(), true
	return out
}

// escapeRune writes one character of an escaped text.
func escapeRune(r rune) string {
	switch {
	case r == '\\':
		return `\\`
	case r == '\n':
		return `\n`
	case r == '\t':
		return `\t`
	case r == '\r':
		return `\r`
	case unshowable(r) || r == utf8.RuneError:
		return fmt.Sprintf(`\u{%X}`, r)
	}
	return string(r)
}

// unshowable reports a character a person cannot be trusted to see as
// what it is: controls (C0, C1, DEL), format characters (bidi overrides
// and isolates, zero-width characters, the BOM, soft hyphen), line and
// paragraph separators, private-use and surrogate code points, spaces
// other than U+0020 and the ideographic space, and noncharacters.
// (Invalid UTF-8, which reads as U+FFFD, is escaped too.)
func unshowable(r rune) bool {
	switch {
	case r == ' ' || r == '\u3000':
		return false
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co, unicode.Cs)
}

// paramOrder lists the names of input in declared order: those in
// declared first, as declared, then the rest sorted (a declaration
// without an order lists them all sorted).
func paramOrder(input map[string]any, declared []string) []string {
	names := make([]string, 0, len(input))
	seen := make(map[string]bool, len(declared))
	for _, k := range declared {
		if _, ok := input[k]; ok && !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	rest := make([]string, 0, len(input)-len(names))
	for k := range input {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}
