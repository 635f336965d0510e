// Package jsstrip drops the comments, blank lines and indentation of a
// hand-written script, so the copy a page loads is smaller while the
// source keeps its comments (make wasm writes dist/pling.js with it).
//
// It is line-based and never reads tokens: it removes only whole lines
// that are a // comment or inside a /* … */ comment that starts a line and
// ends one, blank lines, and the leading whitespace of the lines it keeps.
// That is safe only where no token spans lines, so it refuses a kept line
// with a template literal (a backtick) or ending in a backslash (a string
// continued on the next line) or opening a block comment it does not
// close (or what looks like one, in a string): there, a line starting with // or /* is
// always a comment, and leading whitespace is never inside a string or a
// regular expression literal.
package jsstrip

import (
	"fmt"
	"strings"
)

// Strip returns src without its whole-line comments, blank lines and
// indentation, or an error naming the first line it cannot strip safely.
func Strip(src string) (string, error) {
	var b strings.Builder
	block := false
	for i, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case block:
			if strings.Contains(t, "*/") {
				if !strings.HasSuffix(t, "*/") {
					return "", fmt.Errorf("line %d: code after a block comment's end", i+1)
				}
				block = false
			}
			continue
		case t == "", strings.HasPrefix(t, "//"):
			continue
		case strings.HasPrefix(t, "/*"):
			end := strings.Index(t[2:], "*/")
			if end < 0 {
				block = true
				continue
			}
			if end+4 != len(t) {
				return "", fmt.Errorf("line %d: code after a block comment on one line", i+1)
			}
			continue
		case strings.Contains(t, "`"):
			return "", fmt.Errorf("line %d: a template literal may span lines", i+1)
		case strings.HasSuffix(t, `\`):
			return "", fmt.Errorf("line %d: a string continued on the next line", i+1)
		case strings.LastIndex(t, "/*") > strings.LastIndex(t, "*/"):
			return "", fmt.Errorf("line %d: a block comment may continue on the next line", i+1)
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	if block {
		return "", fmt.Errorf("a block comment is not closed")
	}
	return b.String(), nil
}
