package jsonvalue

import "github.com/pling-go/pling/internal/jsonwrite"

// AppendQuoted appends s as a JSON string, byte for byte as encoding/json
// writes it (json.Marshal with html true; an Encoder with
// SetEscapeHTML(false) with html false): the short escapes \" \\ \b \f \n
// \r \t, other control characters as \u00xx, invalid UTF-8 as \ufffd,
// U+2028 and U+2029 escaped, and with html also <, > and &. It avoids the
// reflection and allocation of json.Marshal on the request path, and the
// first-use cost of that machinery when a page starts.
func AppendQuoted(dst []byte, s string, html bool) []byte {
	if html {
		return jsonwrite.Quote(dst, s, jsonwrite.GoJSONHTML)
	}
	return jsonwrite.Quote(dst, s, jsonwrite.GoJSON)
}
