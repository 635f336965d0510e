package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
)

// The pieces of schema.Encode's spelling that schema.AppendValue and the
// generated encoders of the wire types (internal/wire) share: floats, map
// keys in order, and bytes already encoded.

var errNotFinite = errors.New("json: unsupported value: a float that is not finite")

// AppendFloat appends a float64 as encoding/json does (ES6 number
// formatting: %f between 1e-6 and 1e21, else %e without a leading zero
// in the exponent); NaN and infinities are errors, encoding/json's own.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if _, err := json.Marshal(f); err != nil {
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

// Compact marks bytes that schema.Encode wrote: valid, compact JSON that
// schema.AppendValue copies as they are (a json.RawMessage would be
// validated and compacted again by encoding/json; the output is the same).
type Compact []byte

// MarshalJSON implements json.Marshaler for Encode's way.
func (c Compact) MarshalJSON() ([]byte, error) { return c, nil }

var _ json.Marshaler = Compact(nil)
