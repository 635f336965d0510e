package schema

import "unicode/utf8"

// AppendQuoted appends s as a JSON string, byte for byte as encoding/json
// writes it (json.Marshal with html true; an Encoder with
// SetEscapeHTML(false) with html false): the short escapes \" \\ \b \f \n
// \r \t, other control characters as \u00xx, invalid UTF-8 as \ufffd,
// U+2028 and U+2029 escaped, and with html also <, > and &. It avoids the
// reflection and allocation of json.Marshal on the request path, and the
// first-use cost of that machinery when a page starts.
func AppendQuoted(dst []byte, s string, html bool) []byte {
	return appendQuoted(dst, s, html, true)
}

// AppendQuotedJCS appends s as RFC 8785 §3.2.2.2 quotes it (JSON.stringify's
// rules): the short escapes, other controls below U+0020 as \u00xx,
// everything else as itself in UTF-8 (no HTML escapes, U+2028 and U+2029
// unescaped), and a byte that is not UTF-8 as U+FFFD itself, as
// encoding/json and every host's JSON decoder would read it.
func AppendQuotedJCS(dst []byte, s string) []byte {
	return appendQuoted(dst, s, false, false)
}

// appendQuoted is the one JSON string writer: goJSON is encoding/json's
// spelling (U+2028, U+2029 and invalid UTF-8 escaped), else RFC 8785's.
func appendQuoted(dst []byte, s string, html, goJSON bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if goJSON {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, "\uFFFD"...)
			}
			i += size
			start = i
			continue
		}
		if goJSON && (r == '\u2028' || r == '\u2029') {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
