package schema

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/pling-go/pling/internal/jsonwrite"
)

// The helpers of the generated encoders (encode_gen.go, written by
// schema/internal/gen from the json tags of the wire types): values typed
// any, and floats, byte for byte as Encode writes them. TestAppendValue
// and FuzzAppendValue check them against Encode.

// AppendValue appends v as Encode writes it: trees of plain JSON values
// by the one JSON writer (internal/jsonwrite), numbers by hand, anything
// else by Encode.
func AppendValue(dst []byte, v any) ([]byte, error) {
	return jsonwrite.Append(dst, v, jsonwrite.GoJSON, appendOther)
}

// appendOther writes what AppendValue's tree walk leaves to it: numbers,
// Compact, and any other Go value.
func appendOther(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case Compact:
		return append(dst, x...), nil
	case json.Number:
		// Encode writes a valid number as it is spelled ("" as 0) and
		// refuses an invalid one.
		if n, err := ParseValue([]byte(x), 0); err == nil && n == any(x) {
			return append(dst, x...), nil
		}
	case float64:
		return AppendFloat(dst, x)
	}
	b, err := Encode(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

var errNotFinite = errors.New("json: unsupported value: a float that is not finite")

// AppendFloat appends a float64 as encoding/json does (ES6 number
// formatting: %f between 1e-6 and 1e21, else %e without a leading zero
// in the exponent); NaN and infinities are errors.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if _, err := Encode(f); err != nil {
			return nil, err
		}
		return nil, errNotFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// SortedKeys returns the keys of m in the order encoding/json writes
// them: sorted by their bytes.
func SortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Compact marks bytes that Encode wrote: valid, compact JSON that
// AppendValue copies as they are (a json.RawMessage would be
// validated and compacted again by encoding/json; the output is the same).
type Compact []byte

// MarshalJSON implements json.Marshaler for Encode's way.
func (c Compact) MarshalJSON() ([]byte, error) { return c, nil }

var _ json.Marshaler = Compact(nil)
