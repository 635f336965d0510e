package jsonvalue

import (
	"bytes"
	"encoding/json"
)

// plainDepth bounds the nesting Plain and PlainText read: far beyond any
// request (MaxDepth) yet short of exhausting a goroutine's stack.
const plainDepth = 10000

// Plain returns v as plain JSON values: nil, bool, string, json.Number,
// map[string]any and []any. Those, and float64, come back as they are (a
// map's or slice's elements are not visited); any other Go value is
// encoded with encoding/json (so struct tags and MarshalJSON apply) and
// read back by PlainText. It is the one way Go and JS values become plain
// JSON in Pling: canonical JSON (digests), error details and the module's
// values from JavaScript all go through it.
func Plain(v any) (any, error) {
	switch v.(type) {
	case nil, bool, string, json.Number, float64, map[string]any, []any:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return PlainText(b)
}

// PlainText reads one JSON value as plain JSON values, numbers as
// json.Number: what a json.Decoder with UseNumber gives (the parser is
// checked against encoding/json by FuzzParse), without its reflection and
// 4 KB buffer per call. The parser refuses duplicate keys, which text from
// encoding/json may carry (a json.RawMessage) and JSON.stringify never
// does: that text takes the decoder's way (the last key wins).
func PlainText(b []byte) (any, error) {
	if v, err := Parse(b, plainDepth); err == nil {
		return v, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}
