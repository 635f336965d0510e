// Package canon writes canonical JSON: object keys sorted by their UTF-16
// code units' byte order (as RFC 8785 does, here by Go string order, which
// agrees for the BMP), no insignificant space, numbers in one spelling. Equal
// JSON values give equal bytes, so digests of inputs, approval bindings and
// loop keys are the same on every host.
package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/pling-go/pling/schema"
)

// Marshal returns the canonical JSON of v. Go values are first encoded with
// encoding/json, so struct tags apply.
func Marshal(v any) ([]byte, error) {
	n, err := normalize(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := write(&buf, n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Digest returns "sha256:" and the hex SHA-256 of the canonical JSON of v.
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

func normalize(v any) (any, error) {
	switch v.(type) {
	case nil, bool, string, json.Number, float64, map[string]any, []any:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// The same value a json.Decoder with UseNumber gives (the parser is
	// checked against encoding/json by schema's FuzzParse), without its
	// reflection and 4 KB buffer per call. The parser refuses duplicate
	// keys, which a json.RawMessage inside v may carry: that text takes
	// the decoder's way (the last key wins), as before.
	if out, err := schema.ParseValue(b, 10000); err == nil {
		return out, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
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
		buf.Write(schema.AppendQuoted(buf.AvailableBuffer(), x, true))
	case json.Number:
		return writeNumber(buf, string(x))
	case float64:
		return writeFloat(buf, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(schema.AppendQuoted(buf.AvailableBuffer(), k, true))
			buf.WriteByte(':')
			n, err := normalize(x[k])
			if err != nil {
				return err
			}
			if err := write(buf, n); err != nil {
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
			n, err := normalize(e)
			if err != nil {
				return err
			}
			if err := write(buf, n); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		n, err := normalize(v)
		if err != nil {
			return err
		}
		return write(buf, n)
	}
	return nil
}

func writeNumber(buf *bytes.Buffer, s string) error {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		buf.WriteString(strconv.FormatInt(i, 10))
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	return writeFloat(buf, f)
}

func writeFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	if f == 0 {
		f = 0 // -0 is written 0, as RFC 8785 does
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		buf.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return nil
	}
	buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}
