package errors

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pling-go/pling/internal/jsonwrite"
)

// MaxDetailsChars caps the JSON encoding of an error's details, in bytes
// (so at most that many characters), before it is logged or returned (seed
// 002 §5: provider details are capped at 600 characters).
const MaxDetailsChars = 600

// Redacted replaces a removed value.
const Redacted = "[REDACTED]"

// TruncatedKey is set to true in details that were cut to fit
// MaxDetailsChars.
const TruncatedKey = "truncated"

// Redact returns a deep copy of details with credentials removed and its
// JSON encoding capped at MaxDetailsChars:
//
//   - a key that names a credential (authorization, cookie, token, secret,
//     password, API key, session, private key, signature, …; case, '-' and
//     '_' ignored) has its value replaced by Redacted;
//   - a header-like object {"name": "Authorization", "value": …} has its
//     value replaced;
//   - a string value that looks like a credential (a Bearer or Basic
//     credential, a JWT, a Pling pl1. token, a key such as sk-…) is
//     replaced wherever it is;
//   - values are normalized through JSON, so only JSON types remain; a value
//     JSON cannot encode is replaced by "[unencodable]".
//
// When the result is still too long, keys are kept in sorted order while
// they fit, a value that does not fit whole is cut to a string prefix of its
// encoding, and TruncatedKey is set. Redact(nil) is nil.
func Redact(details map[string]any) map[string]any {
	if details == nil {
		return nil
	}
	in := make(map[string]any, len(details))
	for k, v := range details {
		if sensitiveKey(k) {
			in[k] = Redacted
			continue
		}
		in[k] = normalize(v)
	}
	// The top-level object is redacted like a nested one, so that details
	// which are themselves a header-like object lose their value too.
	out := redactValue(in).(map[string]any)
	if size(out) <= MaxDetailsChars {
		return out
	}
	return capDetails(out)
}

// RedactString returns s with anything that looks like a credential
// replaced, and cut to MaxDetailsChars. It is for free text such as a
// message that came from page code.
func RedactString(s string) string {
	s = replaceCredentials(s)
	return truncateString(s, MaxDetailsChars)
}

// RedactValue returns v as Redact keeps it under the key k, without the
// size cap: Redacted when k names a credential, else a copy with
// credential-looking strings and the values of credential keys replaced.
// It is for a value shown to a person (an approval challenge), which is
// bounded by its own rules.
func RedactValue(k string, v any) any {
	if sensitiveKey(k) {
		return Redacted
	}
	return redactValue(normalize(v))
}

var sensitiveWords = []string{
	"authorization", "cookie", "token", "secret", "password", "passwd", "passphrase",
	"apikey", "credential", "privatekey", "session", "signature", "bearer", "csrf", "xsrf",
}

var sensitiveExact = map[string]bool{"auth": true, "pin": true, "cvv": true, "cvc": true, "otp": true}

func sensitiveKey(k string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r != '-' && r != '_' && r != ' ' && r != '.' {
			b.WriteRune(r)
		}
	}
	n := b.String()
	if sensitiveExact[n] {
		return true
	}
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func normalize(v any) any {
	// Numbers go through JSON too: a NaN or an invalid json.Number cannot
	// be encoded, which would defeat the cap and MarshalJSON.
	switch v.(type) {
	case nil, string, bool:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "[unencodable]"
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if d.Decode(&out) != nil {
		return "[unencodable]"
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		if hasCredential(x) {
			return replaceCredentials(x)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		headerLike := false
		for _, nk := range []string{"name", "key", "header"} {
			if s, ok := x[nk].(string); ok && sensitiveKey(s) {
				headerLike = true
			}
		}
		for k, e := range x {
			switch {
			case sensitiveKey(k):
				out[k] = Redacted
			case headerLike && (k == "value" || k == "values"):
				out[k] = Redacted
			default:
				out[k] = redactValue(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
		}
		return out
	}
	return v
}

// encode writes v as json.Marshal does, HTML escaped: the cap holds for
// what (*Error).MarshalJSON writes, where < > & take six bytes each. The
// tree of plain JSON values Redact keeps is written by the one JSON writer
// (internal/jsonwrite), a number or any other value by encoding/json; nil
// when v cannot be written.
func encode(v any) []byte {
	b, err := jsonwrite.Append(nil, v, jsonwrite.GoJSONHTML, func(dst []byte, v any) ([]byte, error) {
		b, err := json.Marshal(v)
		return append(dst, b...), err
	})
	if err != nil {
		return nil
	}
	return b
}

func size(v any) int { return len(encode(v)) }

func capDetails(in map[string]any) map[string]any {
	keys := make([]string, 0, len(in))
	for k := range in {
		if k != TruncatedKey {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := map[string]any{TruncatedKey: true}
	for _, k := range keys {
		out[k] = in[k]
		if size(out) <= MaxDetailsChars {
			continue
		}
		// Cut the value to a string prefix that fits, if any room is left.
		out[k] = ""
		room := MaxDetailsChars - size(out)
		if room <= 1 {
			delete(out, k)
			break
		}
		text := in[k]
		s, ok := text.(string)
		if !ok {
			s = string(encode(text))
		}
		out[k] = fitString(s, room, func(c string) bool {
			out[k] = c
			return size(out) <= MaxDetailsChars
		})
		if out[k] == "" {
			delete(out, k)
		}
		break
	}
	return out
}

// fitString returns the longest prefix of s (with an ellipsis when cut) for
// which fits holds, trying at most a few lengths by binary search.
func fitString(s string, room int, fits func(string) bool) string {
	lo, hi := 0, utf8.RuneCountInString(s)
	if hi > room {
		hi = room
	}
	best := ""
	for lo <= hi {
		mid := (lo + hi) / 2
		c := truncateRunes(s, mid) + "…"
		if fits(c) {
			best = c
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best
}

func truncateRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func truncateString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
