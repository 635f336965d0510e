// Package pagetext is how text a page wrote reaches a reader who is not
// the page — a model through pling mcp or the WebMCP mirror, a person at
// a terminal running pling check or describe: with every character the
// reader cannot see escaped, marked as the page's where it sits beside
// the reader's own words, and cut to a bound the reader's side chose.
//
// A page is untrusted, and so is what its users wrote into it (reviews,
// comments, ticket titles). A zero-width character, a bidi override or a
// Unicode tag character (U+E0000–E007F) reads as nothing to a person and
// as instructions to a model; an ESC sequence rewrites a terminal. One
// function escapes them all, so no path forgets one of them.
package pagetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports whether a reader cannot see r, or r changes how what
// follows it is shown: control characters (C0, DEL, C1: ESC, CSI, OSC
// start here), format characters (zero-width spaces and joiners, bidi
// marks, embeddings, overrides and isolates, the BOM, soft hyphen, the
// Unicode tag characters U+E0000–E007F), line and paragraph separators,
// variation selectors and the blank Hangul fillers.
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r < 0xa0:
		return false
	case unicode.Is(unicode.Cf, r), r == 0x2028, r == 0x2029:
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x180e:
		return true
	}
	return false
}

// Escape is s with each Hidden character written as a JSON escape —
// \n, \r, \t, \u200b, and a surrogate pair above U+FFFF (\udb40\udc41
// for U+E0041) — and each byte that is not UTF-8 as \ufffd. What a
// reader sees is left as it is, backslashes included; inside Quote the
// result is a valid JSON string.
func Escape(s string) string { return escape(s, false) }

// EscapeText is Escape for a text of lines: a newline or a tab is left
// as it is (the text's own layout); every other Hidden character is
// escaped. It is for text whose author is the reader's side (a tool
// result pling mcp writes, a terminal report), in which the page's words
// were quoted where they were put: it catches what a path forgot.
func EscapeText(s string) string { return escape(s, true) }

func escape(s string, layout bool) string {
	hidden := func(r rune) bool { return Hidden(r) && !(layout && (r == '\n' || r == '\t')) }
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || hidden(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\ufffd`)
		case hidden(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i-n : i])
		}
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
		return
	case '\r':
		b.WriteString(`\r`)
		return
	case '\t':
		b.WriteString(`\t`)
		return
	}
	if r > 0xffff {
		r -= 0x10000
		writeU(b, 0xd800+(r>>10))
		writeU(b, 0xdc00+(r&0x3ff))
		return
	}
	writeU(b, r)
}

func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// Quote is s as one JSON string literal, every Hidden character escaped
// and visible text as it is (no HTML escaping): the quotes are the
// reader's side's, since a quote the page writes is escaped, so the page
// cannot end its words and go on in another voice.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b.WriteString(Escape(s[start:i]))
			b.WriteByte('\\')
			b.WriteByte(c)
			start = i + 1
		}
	}
	b.WriteString(Escape(s[start:]))
	b.WriteByte('"')
	return b.String()
}

// Words marks s as the page's: Quote(s) after "From the page: ", the
// phrase every reader of pling's output learns to take as someone
// else's words.
func Words(s string) string { return "From the page: " + Quote(s) }

// Cut is s cut to at most max characters (runes), and how many it cut.
func Cut(s string, max int) (string, int) {
	if max < 0 {
		max = 0
	}
	if len(s) <= max {
		return s, 0
	}
	k := 0
	for i := range s {
		if k == max {
			return s[:i], utf8.RuneCountInString(s[i:])
		}
		k++
	}
	return s, 0
}

// CutBytes is s cut to at most n bytes, at the start of a rune.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Line is s as one line for a reader: Escape(s) (a newline the page wrote
// cannot start a line of its own), cut to at most max characters of the
// escaped text, with "…" where it was cut.
func Line(s string, max int) string {
	if len(s) > 4*max+4 {
		s = CutBytes(s, 4*max+4) // no more is shown: escape no more
	}
	e, cut := Cut(Escape(s), max)
	if cut > 0 {
		return e + "…"
	}
	return e
}
