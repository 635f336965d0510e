package schema

import (
	"bytes"
	"encoding/json"

	"github.com/pling-go/pling/internal/jsonvalue"
)

// Encode writes v as compact JSON, deterministically: struct fields in
// declaration order, map keys sorted, no HTML escaping, no trailing newline.
// The same value gives the same bytes on every host.
func Encode(v any) ([]byte, error) {
	// What a handler usually returns is written without the encoder's
	// reflection, byte for byte as the encoder writes it.
	switch x := v.(type) {
	case nil:
		return []byte("null"), nil
	case bool:
		if x {
			return []byte("true"), nil
		}
		return []byte("false"), nil
	case string:
		return jsonvalue.AppendQuoted(make([]byte, 0, len(x)+2), x, false), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
