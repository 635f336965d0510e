// Package canon writes JSON in the JSON Canonicalization Scheme, RFC 8785
// (JCS): object keys sorted by their UTF-16 code units, no insignificant
// space, strings escaped as ECMAScript's JSON.stringify escapes them, and
// every number written as ECMAScript's Number.prototype.toString writes
// the IEEE-754 double it denotes. Equal JSON values give equal bytes, so
// digests of inputs, approval bindings and loop keys are the same on every
// host, and an approver holding the input can recompute its digest with any
// RFC 8785 implementation.
package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pling-go/pling/schema"
)

// Marshal returns the RFC 8785 form of v. Go values are first encoded with
// encoding/json, so struct tags apply. A number that is not a finite
// IEEE-754 double (NaN, ±Inf, a json.Number beyond ±1.8e308) is an error;
// integers beyond 2^53 are written as the double nearest them, as every
// RFC 8785 implementation does.
func Marshal(v any) ([]byte, error) {
	n, err := schema.Plain(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := write(&buf, n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Digest returns "sha256:" and the lowercase hex SHA-256 of the UTF-8 bytes
// of the RFC 8785 form of v (what Marshal returns).
func Digest(v any) (string, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", err
	}
	return Sum(b), nil
}

// Sum is Digest for canonical JSON already written: "sha256:" and the hex
// SHA-256 of b.
func Sum(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func write(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		buf.Write(schema.AppendQuotedJCS(buf.AvailableBuffer(), x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return err
		}
		return writeFloat(buf, f)
	case float64:
		return writeFloat(buf, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortKeys(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(schema.AppendQuotedJCS(buf.AvailableBuffer(), k))
			buf.WriteByte(':')
			if err := writeValue(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeValue(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return writeValue(buf, v)
	}
	return nil
}

// writeValue writes an element of a map[string]any or []any, which may be
// any Go value.
func writeValue(buf *bytes.Buffer, v any) error {
	n, err := schema.Plain(v)
	if err != nil {
		return err
	}
	return write(buf, n)
}

// sortKeys orders an object's keys by compareUTF16. It is sort.Slice, not
// slices.SortFunc: the module carries sort.Slice's one instance for every
// caller already, and slices.SortFunc on strings would add a copy of
// pdqsort of its own (19 KB of the module). Both are generated from one
// template (sort/gen_sort_variants.go) and compare and swap the same
// elements in the same order, so the keys come out alike.
func sortKeys(keys []string) {
	sort.Slice(keys, func(i, j int) bool { return compareUTF16(keys[i], keys[j]) < 0 })
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
// Go's string order is UTF-8 byte order, which is code point order; the two
// differ only where a character beyond the BMP (a surrogate pair, 0xD800 to
// 0xDFFF) meets one from U+E000 to U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpUnit(firstUnit(ra), firstUnit(rb), ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

func cmpUnit(ua, ub, ra, rb rune) int {
	if ua != ub {
		return int(ua - ub)
	}
	// Two characters beyond the BMP with the same high surrogate: their
	// low surrogates are in the order of the characters.
	return int(ra - rb)
}

func writeFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	buf.Write(appendNumber(buf.AvailableBuffer(), f))
	return nil
}

// appendNumber appends f as ECMAScript's Number.prototype.toString writes
// it (ECMA-262 Number::toString, which RFC 8785 §3.2.2.3 adopts): the
// shortest digits that read back as f, in plain notation when the decimal
// exponent is from -7 to 20, otherwise as d.ddde±n. -0 is written 0. f must
// be finite.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits:
	// d[.ddd]e±xx.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	ei := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[ei+1:]))
	digits := make([]byte, 0, 17)
	digits = append(digits, e[0])
	if ei > 1 {
		digits = append(digits, e[2:ei]...)
	}
	k := len(digits)
	n := exp + 1 // f = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
