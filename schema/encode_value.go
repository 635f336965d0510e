package schema

import (
	"encoding/json"

	"github.com/pling-go/pling/internal/jsonvalue"
	"github.com/pling-go/pling/internal/jsonwrite"
)

// The helper of the generated result encoders (internal/wire, written by
// schema/internal/gen from the json tags of the wire types) for values
// typed any, byte for byte as Encode writes them. TestTrees here, and
// TestAppendValue and FuzzAppendValue beside the encoders, check it
// against Encode.

// AppendValue appends v as Encode writes it: trees of plain JSON values
// by the one JSON writer (internal/jsonwrite), numbers by hand, anything
// else by Encode.
func AppendValue(dst []byte, v any) ([]byte, error) {
	return jsonwrite.Append(dst, v, jsonwrite.GoJSON, appendOther)
}

// appendOther writes what AppendValue's tree walk leaves to it: numbers,
// jsonvalue.Compact, and any other Go value.
func appendOther(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case jsonvalue.Compact:
		return append(dst, x...), nil
	case json.Number:
		// Encode writes a valid number as it is spelled ("" as 0) and
		// refuses an invalid one.
		if n, err := jsonvalue.Parse([]byte(x), 0); err == nil && n == any(x) {
			return append(dst, x...), nil
		}
	case float64:
		return jsonvalue.AppendFloat(dst, x)
	}
	b, err := Encode(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}
