package errors

import (
	"strings"
	"unicode/utf8"
)

// The credential-looking text RedactString and Redact replace, found
// without a regular expression engine (the module carries none). It is,
// exactly, what this RE2 expression finds leftmost-first; FuzzCredentialScan
// holds the two equal:
//
//	(?i)\b(?:bearer|basic|digest)\s+[A-Za-z0-9._~+/=-]{8,}
//	|\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*
//	|\bpl1\.[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?
//	|\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}
//	|\bgh[pousr]_[A-Za-z0-9]{20,}
//	|\bAKIA[0-9A-Z]{16}\b
//	|\b(?:access_token|refresh_token|id_token|token|password|passwd|api_key|apikey|secret|client_secret|sig|signature)=[^&\s"']+
//
// HTTP auth schemes, JWTs, Pling's own delegation token
// (pl1.<kid>.<payload>.<signature>, also without its signature; a short
// payload such as pl1.cart.add is an id, not a token), common API key
// prefixes and credential query parameters. Letters match in either case,
// with Unicode's simple folding as RE2 does it (ſ is s, the Kelvin sign k).

// credScanner reads s by runes from a position. ends keeps, for each
// class, the last maximal run it found, so a long run that many starts
// reach (eyJ-eyJ-eyJ-…) is walked once: the scan stays linear in s.
type credScanner struct {
	s    string
	ends [nClasses]struct{ from, end int }
}

// A class of runes a run may be made of.
type class uint8

const (
	classSpace class = iota // RE2's \s: [\t\n\f\r ]
	classAuth               // [A-Za-z0-9._~+/=-]
	classToken              // [A-Za-z0-9_-]
	classAlnum              // [A-Za-z0-9]
	classSep                // [-_]
	classGH                 // [pousr]
	classValue              // [^&\s"']
	nClasses
)

func (c class) has(r rune) bool {
	switch c {
	case classSpace:
		return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
	case classAuth:
		return authChar(r)
	case classToken:
		return tokenChar(r)
	case classAlnum:
		return alnum(r)
	case classSep:
		return r == '-' || r == '_'
	case classGH:
		return strings.ContainsRune("pousr", fold(r))
	case classValue:
		return !classSpace.has(r) && r != '&' && r != '"' && r != '\''
	}
	return false
}

// fold returns r's lower-case ASCII letter under case folding, else r.
func fold(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + ('a' - 'A')
	case r == 'ſ':
		return 's'
	case r == 'K':
		return 'k'
	}
	return r
}

func isLetter(r rune) bool { r = fold(r); return r >= 'a' && r <= 'z' }

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// tokenChar is [A-Za-z0-9_-].
func tokenChar(r rune) bool { return isLetter(r) || isDigit(r) || r == '_' || r == '-' }

// alnum is [A-Za-z0-9] (and [0-9A-Z] under folding).
func alnum(r rune) bool { return isLetter(r) || isDigit(r) }

// authChar is [A-Za-z0-9._~+/=-].
func authChar(r rune) bool { return alnum(r) || strings.ContainsRune("._~+/=-", r) }

// asciiWord is RE2's \w, which \b reads.
func asciiWord(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b == '_'
}

func (c *credScanner) boundary(i int) bool {
	before := i > 0 && asciiWord(c.s[i-1])
	after := i < len(c.s) && asciiWord(c.s[i])
	return before != after
}

func (c *credScanner) rune(i int) (rune, int) {
	if i >= len(c.s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(c.s[i:])
}

// lit matches word (lower-case ASCII letters, digits and punctuation)
// at i, letters in either case; it returns the end or -1.
func (c *credScanner) lit(i int, word string) int {
	for _, w := range word {
		r, n := c.rune(i)
		if n == 0 || fold(r) != w {
			return -1
		}
		i += n
	}
	return i
}

// run matches at least lo and at most hi (hi < 0: no limit) runes of
// class cl at i, as many as it can; it returns the end or -1.
func (c *credScanner) run(i, lo, hi int, cl class) int {
	k := 0
	for hi < 0 || k < hi {
		if hi < 0 && k >= lo {
			// The rest of an unbounded run ends where the run ends.
			if e := c.ends[cl]; i >= e.from && i <= e.end && e.end > 0 {
				return e.end
			}
			from := i
			for {
				r, n := c.rune(i)
				if n == 0 || !cl.has(r) {
					break
				}
				i += n
			}
			c.ends[cl].from, c.ends[cl].end = from, i
			return i
		}
		r, n := c.rune(i)
		if n == 0 || !cl.has(r) {
			break
		}
		i += n
		k++
	}
	if k < lo {
		return -1
	}
	return i
}

// oneOf matches the first of words at i that the rest (then) matches
// after, returning the end of the whole or -1: RE2's leftmost-first
// choice among alternatives.
func (c *credScanner) oneOf(i int, words []string, then func(int) int) int {
	for _, w := range words {
		if e := c.lit(i, w); e >= 0 {
			if end := then(e); end >= 0 {
				return end
			}
		}
	}
	return -1
}

var (
	authSchemes = []string{"bearer", "basic", "digest"}
	keyPrefixes = []string{"sk", "pk", "rk"}
	credParams  = []string{"access_token", "refresh_token", "id_token", "token", "password", "passwd",
		"api_key", "apikey", "secret", "client_secret", "sig", "signature"}
)

// at returns the end of the credential that starts at i, or -1.
func (c *credScanner) at(i int) int {
	if !c.boundary(i) {
		return -1
	}
	seq := func(i int, steps ...func(int) int) int {
		for _, f := range steps {
			if i < 0 {
				return -1
			}
			i = f(i)
		}
		return i
	}
	lit := func(w string) func(int) int { return func(i int) int { return c.lit(i, w) } }
	run := func(lo, hi int, cl class) func(int) int {
		return func(i int) int { return c.run(i, lo, hi, cl) }
	}
	if e := c.oneOf(i, authSchemes, func(e int) int { return seq(e, run(1, -1, classSpace), run(8, -1, classAuth)) }); e >= 0 {
		return e
	}
	if e := seq(i, lit("eyj"), run(5, -1, classToken), lit("."), run(5, -1, classToken), lit("."), run(0, -1, classToken)); e >= 0 {
		return e
	}
	if e := seq(i, lit("pl1."), run(1, 64, classToken), lit("."), run(8, -1, classToken)); e >= 0 {
		if f := seq(e, lit("."), run(0, -1, classToken)); f >= 0 {
			return f
		}
		return e
	}
	if e := c.oneOf(i, keyPrefixes, func(e int) int { return seq(e, run(1, 1, classSep), run(12, -1, classToken)) }); e >= 0 {
		return e
	}
	if e := seq(i, lit("gh"), run(1, 1, classGH), lit("_"), run(20, -1, classAlnum)); e >= 0 {
		return e
	}
	if e := seq(i, lit("akia"), run(16, 16, classAlnum)); e >= 0 && c.boundary(e) {
		return e
	}
	return c.oneOf(i, credParams, func(e int) int { return seq(e, lit("="), run(1, -1, classValue)) })
}

// findCredential returns the first credential-looking span in s at or
// after from, or -1.
func findCredential(s string, from int) (start, end int) {
	c := &credScanner{s: s}
	for i := from; i < len(s); i++ {
		if e := c.at(i); e >= 0 {
			return i, e
		}
	}
	return -1, -1
}

func hasCredential(s string) bool {
	i, _ := findCredential(s, 0)
	return i >= 0
}

// replaceCredentials returns s with each credential-looking span replaced
// by Redacted.
func replaceCredentials(s string) string {
	i, e := findCredential(s, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i >= 0 {
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		last = e
		i, e = findCredential(s, e)
	}
	b.WriteString(s[last:])
	return b.String()
}
