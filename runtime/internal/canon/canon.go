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
	"strconv"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/jsonwrite"
)

// Marshal returns the RFC 8785 form of v. Go values are first encoded with
// encoding/json, so struct tags apply. A number that is not a finite
// IEEE-754 double (NaN, ±Inf, a json.Number beyond ±1.8e308) is an error;
// integers beyond 2^53 are written as the double nearest them, as every
// RFC 8785 implementation does.
func Marshal(v any) ([]byte, error) {
	return jsonwrite.Append(nil, v, jsonwrite.Canonical, appendOther)
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

// appendOther writes what the tree walk of jsonwrite.Append leaves to it:
// numbers as RFC 8785 writes them, and any other Go value as the plain
// JSON values jsonvalue.Plain gives.
func appendOther(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, err
		}
		return appendFinite(dst, f)
	case float64:
		return appendFinite(dst, x)
	}
	n, err := jsonvalue.Plain(v)
	if err != nil {
		return nil, err
	}
	return jsonwrite.Append(dst, n, jsonwrite.Canonical, appendOther)
}

func appendFinite(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return appendNumber(dst, f), nil
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
