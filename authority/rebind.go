package authority

import (
	"strconv"
	"strings"
)

// rebind rewrites a query written with SQLite's ? placeholders into
// PostgreSQL's $1…$n, leaving alone a ? inside a string literal ('…',
// with ” as the escaped quote), a quoted identifier ("…"), a line
// comment (-- …) or a block comment (/* … */); SQLite's numbered ?NNN
// becomes $NNN. The store's SQL is written
// once, with ?, and rebound for PostgreSQL by the connection itself (see
// OpenPostgres), so every query of the store runs unchanged on both.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // '' or "": an escaped quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(q))
			b.WriteString(q[i:end])
			i = end - 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end - 1
		case c == '?' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			b.WriteByte('$') // ?NNN, SQLite's numbered parameter, is PostgreSQL's $NNN
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
