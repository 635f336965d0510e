package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// decodeCase is one request text and what the decoder must make of it
// (docs/protocol.md §3.1–3.3). Its name starts with the step of §3.3 whose rule it
// checks; step is where the request stops (0: accepted).
type decodeCase struct {
	name     string
	step     int
	raw      string
	wantCode perr.Code
	// wantID is the response id; nil means it must be null.
	wantID *string
	// wantReq is the decoded request of an accepted case.
	wantReq *wire.Request
	// wantDetails, when set, lists keys that the response's error.details
	// must hold, as they read back from JSON.
	wantDetails map[string]any
}

func strp(s string) *string { return &s }
func intp(n int) *int       { return &n }

// r1 is the id most cases carry.
var r1 = strp("r1")

// Request texts used by several cases.
const (
	describeR1 = `{"protocol":"pling.surface/0.1","id":"r1","method":"describe"}`
	invokeHead = `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke"`
)

func describeReq(id string) *wire.Request {
	return &wire.Request{Protocol: schema.Protocol, ID: id, Method: schema.MethodDescribe}
}

func invokeReq(id, capability string, input map[string]any) *wire.Request {
	if input == nil {
		input = map[string]any{}
	}
	return &wire.Request{Protocol: schema.Protocol, ID: id, Method: schema.MethodInvoke, Capability: capability, Input: input}
}

// nested returns an invoke request whose text nests levels arrays and
// objects deep in all, the envelope object included.
func nested(levels int) string {
	// The envelope, then input and levels-2 objects inside it.
	inner := strings.Repeat(`{"a":`, levels-1) + "1" + strings.Repeat("}", levels-1)
	return invokeHead + `,"capability":"c","input":` + inner + `}`
}

// nestedWant is the request nested(levels) decodes to.
func nestedWant(levels int) *wire.Request {
	var v any = json.Number("1")
	for i := 0; i < levels-1; i++ {
		v = map[string]any{"a": v}
	}
	return invokeReq("r1", "c", v.(map[string]any))
}

// sized returns a valid invoke request of exactly n bytes (n >= 100).
func sized(n int) string {
	head := invokeHead + `,"capability":"c","input":{"pad":"`
	tail := `"}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

func sizedWant(n int) *wire.Request {
	head := invokeHead + `,"capability":"c","input":{"pad":"`
	return invokeReq("r1", "c", map[string]any{"pad": strings.Repeat("x", n-len(head)-len(`"}}`))})
}

// criticalNames returns a JSON array of n understood names.
func criticalNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = `"id"`
	}
	return "[" + strings.Join(names, ",") + "]"
}

var (
	supportedProtocols = map[string]any{"supported": []any{"pling.surface/0.1"}}
	supportedMethods   = map[string]any{"supported": []any{"describe", "invoke"}}
)

func field(name string) map[string]any { return map[string]any{"field": name} }

func reason(r string) map[string]any { return map[string]any{"reason": r} }

// decodeCases is the table of TestDecodeRequest; FuzzDecode seeds its
// corpus from it.
var decodeCases = []decodeCase{
	// Step 1: not a JSON object → INVALID_REQUEST, id null.
	{name: "step1/empty input", step: 1, raw: ``, wantCode: perr.InvalidRequest, wantDetails: reason("malformed_json")},
	{name: "step1/whitespace only", step: 1, raw: " \t\r\n ", wantCode: perr.InvalidRequest, wantDetails: reason("malformed_json")},
	{name: "step1/malformed json: trailing comma in object", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe",}`, wantCode: perr.InvalidRequest, wantDetails: reason("malformed_json")},
	{name: "step1/malformed json: trailing comma in array", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":["id",]}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: single quotes", step: 1,
		raw: `{'protocol':'pling.surface/0.1','id':'r1','method':'describe'}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: unquoted key", step: 1,
		raw: `{protocol:"pling.surface/0.1","id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: NaN", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"n":NaN}}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: Infinity", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"n":-Infinity}}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: truncated object", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1"`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: truncated string", step: 1,
		raw: `{"protocol":"pling.surf`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: truncated after colon", step: 1,
		raw: `{"protocol":`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: missing colon", step: 1,
		raw: `{"protocol" "pling.surface/0.1","id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: missing comma", step: 1,
		raw: `{"protocol":"pling.surface/0.1" "id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: comment", step: 1,
		raw: `{"protocol":"pling.surface/0.1", // v0.1
"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: leading zero", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"n":01}}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: raw control character in string", step: 1,
		raw: "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"session\":\"a\x01b\"}", wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: unknown escape", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":"\x41"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: short unicode escape", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":"\u12"}`, wantCode: perr.InvalidRequest},
	{name: "step1/malformed json: byte order mark", step: 1,
		raw: "\ufeff" + describeR1, wantCode: perr.InvalidRequest},
	{name: "step1/invalid utf-8 in a key", step: 1,
		raw: "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"x\xff\":1}", wantCode: perr.InvalidRequest, wantDetails: reason("invalid_utf8")},
	{name: "step1/invalid utf-8 in a value", step: 1,
		raw: "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"invoke\",\"capability\":\"c\",\"input\":{\"note\":\"caf\xe9\"}}", wantCode: perr.InvalidRequest, wantDetails: reason("invalid_utf8")},
	{name: "step1/invalid utf-8: overlong encoding", step: 1,
		raw: "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"session\":\"\xc0\xaf\"}", wantCode: perr.InvalidRequest, wantDetails: reason("invalid_utf8")},
	{name: "step1/invalid utf-8: encoded surrogate", step: 1,
		raw: "{\"protocol\":\"pling.surface/0.1\",\"id\":\"r1\",\"method\":\"describe\",\"session\":\"\xed\xa0\x80\"}", wantCode: perr.InvalidRequest, wantDetails: reason("invalid_utf8")},
	{name: "step1/lone surrogate: high alone", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"a\ud800b"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: low alone", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"\udc00"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: high followed by non-low escape", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"\ud800\u0041"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: high followed by high", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"\uD800\uDBFF"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: high at end of string", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"x\udbff"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: in a key", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"\udfff":1}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/lone surrogate: low after a valid pair", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"s":"\ud83d\ude00\ude00"}}`, wantCode: perr.InvalidRequest, wantDetails: reason("invalid_unicode_escape")},
	{name: "step1/accepted: valid surrogate pair", step: 0,
		raw:     invokeHead + `,"capability":"c","input":{"s":"\ud83d\ude00 \uD834\uDD1E"}}`,
		wantReq: invokeReq("r1", "c", map[string]any{"s": "😀 𝄞"})},
	{name: "step1/accepted: escaped backslash before u is no escape", step: 0,
		raw:     invokeHead + `,"capability":"c","input":{"s":"\\ud800"}}`,
		wantReq: invokeReq("r1", "c", map[string]any{"s": `\ud800`})},
	{name: "step1/duplicate key: id twice", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","id":"r2","method":"describe"}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: id twice with the same value", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","id":"r1"}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: protocol twice", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","protocol":"pling.surface/0.1"}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: unknown top-level key twice", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","x":1,"x":2}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: nested inside input", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"a":{"b":1,"b":1}}}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: inside an array inside input", step: 1,
		raw: invokeHead + `,"capability":"c","input":{"list":[{"k":1},{"k":1,"k":2}]}}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/duplicate key: one spelled with an escape", step: 1,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","\u0069d":"r2","method":"describe"}`, wantCode: perr.InvalidRequest, wantDetails: reason("duplicate_key")},
	{name: "step1/accepted: the same key in different objects", step: 0,
		raw:     invokeHead + `,"capability":"c","input":{"id":"x","a":{"id":"y"}}}`,
		wantReq: invokeReq("r1", "c", map[string]any{"id": "x", "a": map[string]any{"id": "y"}})},
	{name: "step1/accepted: escaped key names", step: 0,
		raw:     `{"\u0070rotocol":"pling.surface\/0.1","id":"r\u0031","method":"describe"}`,
		wantReq: describeReq("r1")},
	{name: "step1/not an object: array", step: 1,
		raw: `[` + describeR1 + `]`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: empty array", step: 1, raw: `[]`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: string", step: 1, raw: `"describe"`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: number", step: 1, raw: `42`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: null", step: 1, raw: `null`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: true", step: 1, raw: `true`, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/not an object: false", step: 1, raw: ` false `, wantCode: perr.InvalidRequest, wantDetails: reason("not_an_object")},
	{name: "step1/trailing data: two objects back to back", step: 1,
		raw: describeR1 + describeR1, wantCode: perr.InvalidRequest, wantDetails: reason("trailing_data")},
	{name: "step1/trailing data: two objects on two lines", step: 1,
		raw: describeR1 + "\n" + describeR1 + "\n", wantCode: perr.InvalidRequest, wantDetails: reason("trailing_data")},
	{name: "step1/trailing data: garbage after the object", step: 1,
		raw: describeR1 + `x`, wantCode: perr.InvalidRequest},
	{name: "step1/trailing data: a stray closing brace", step: 1,
		raw: describeR1 + `}`, wantCode: perr.InvalidRequest},
	{name: "step1/accepted: whitespace around the object", step: 0,
		raw: " \r\n\t" + describeR1 + "\n\t ", wantReq: describeReq("r1")},
	{name: "step1/too deep: MaxDepth+1 levels of objects", step: 1,
		raw: nested(schema.MaxDepth + 1), wantCode: perr.InvalidRequest, wantDetails: reason("too_deep")},
	{name: "step1/too deep: arrays far beyond MaxDepth", step: 1,
		raw:      invokeHead + `,"capability":"c","input":{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`,
		wantCode: perr.InvalidRequest, wantDetails: reason("too_deep")},
	{name: "step1/accepted: nesting exactly MaxDepth", step: 0,
		raw: nested(schema.MaxDepth), wantReq: nestedWant(schema.MaxDepth)},
	{name: "step1/too large: MaxRequestBytes+1", step: 1,
		raw: sized(schema.MaxRequestBytes + 1), wantCode: perr.InvalidRequest, wantDetails: reason("too_large")},
	{name: "step1/accepted: exactly MaxRequestBytes", step: 0,
		raw: sized(schema.MaxRequestBytes), wantReq: sizedWant(schema.MaxRequestBytes)},

	// Step 2: protocol.
	{name: "step2/protocol missing", step: 2,
		raw: `{"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("protocol")},
	{name: "step2/protocol missing, id malformed", step: 2,
		raw: `{"id":"r 1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step2/protocol number", step: 2,
		raw: `{"protocol":0.1,"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("protocol")},
	{name: "step2/protocol null", step: 2,
		raw: `{"protocol":null,"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step2/protocol object", step: 2,
		raw: `{"protocol":{"version":"pling.surface/0.1"},"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step2/protocol array", step: 2,
		raw: `{"protocol":["pling.surface/0.1"],"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step2/protocol true", step: 2,
		raw: `{"protocol":true,"id":"r1","method":"describe"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step2/unsupported: pling.surface/0.2", step: 2,
		raw: `{"protocol":"pling.surface/0.2","id":"r1","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/unsupported: pling.surface/1.0", step: 2,
		raw: `{"protocol":"pling.surface/1.0","id":"r1","method":"invoke","capability":"c"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/unsupported: empty string", step: 2,
		raw: `{"protocol":"","id":"r1","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/unsupported: upper case", step: 2,
		raw: `{"protocol":"PLING.SURFACE/0.1","id":"r1","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/unsupported: surrounding space", step: 2,
		raw: `{"protocol":" pling.surface/0.1","id":"r1","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/unsupported, id missing: id null", step: 2,
		raw: `{"protocol":"pling.surface/0.2","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantDetails: supportedProtocols},
	{name: "step2/unsupported, id malformed: id null", step: 2,
		raw: `{"protocol":"pling.surface/0.2","id":"r/1","method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantDetails: supportedProtocols},
	{name: "step2/unsupported, id a number: id null", step: 2,
		raw: `{"protocol":"pling.surface/0.2","id":7,"method":"describe"}`, wantCode: perr.ProtocolVersionUnsupported, wantDetails: supportedProtocols},
	{name: "step2/order: unsupported protocol and unknown method", step: 2,
		raw: `{"protocol":"pling.surface/0.2","id":"r1","method":"call"}`, wantCode: perr.ProtocolVersionUnsupported, wantID: r1, wantDetails: supportedProtocols},
	{name: "step2/order: protocol missing and id missing", step: 2,
		raw: `{"method":"describe"}`, wantCode: perr.InvalidRequest, wantDetails: field("protocol")},
	{name: "step2/order: protocol missing and invoke fields malformed", step: 2,
		raw: `{"id":"r1","method":"invoke","capability":7,"input":[]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("protocol")},
	{name: "step2/order: empty object", step: 2, raw: `{}`, wantCode: perr.InvalidRequest, wantDetails: field("protocol")},

	// Step 3: id.
	{name: "step3/id missing", step: 3,
		raw: `{"protocol":"pling.surface/0.1","method":"describe"}`, wantCode: perr.InvalidRequest, wantDetails: field("id")},
	{name: "step3/id number", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":1,"method":"describe"}`, wantCode: perr.InvalidRequest, wantDetails: field("id")},
	{name: "step3/id null", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":null,"method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id empty", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id 129 chars", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"` + strings.Repeat("a", 129) + `","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/accepted: id 128 chars", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"` + strings.Repeat("a", 128) + `","method":"describe"}`, wantReq: describeReq(strings.Repeat("a", 128))},
	{name: "step3/accepted: id 1 char", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"7","method":"describe"}`, wantReq: describeReq("7")},
	{name: "step3/accepted: id of every allowed punctuation", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"Req.2026_01:a-Z9","method":"describe"}`, wantReq: describeReq("Req.2026_01:a-Z9")},
	{name: "step3/id with space", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"req 1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id with slash", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"req/1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id with unicode", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"réq1","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id with an escaped NUL", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"r1\u0000","method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id as array", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":["r1"],"method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id as object", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":{"v":"r1"},"method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/id true", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":true,"method":"describe"}`, wantCode: perr.InvalidRequest},
	{name: "step3/order: bad id and unknown method", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"r 1","method":"call"}`, wantCode: perr.InvalidRequest, wantDetails: field("id")},
	{name: "step3/order: bad id and invoke without capability", step: 3,
		raw: `{"protocol":"pling.surface/0.1","id":"","method":"invoke","input":5}`, wantCode: perr.InvalidRequest, wantDetails: field("id")},
	{name: "step3/order: id missing and method missing", step: 3,
		raw: `{"protocol":"pling.surface/0.1"}`, wantCode: perr.InvalidRequest, wantDetails: field("id")},

	// Step 4: method.
	{name: "step4/method missing", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("method")},
	{name: "step4/method number", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":1}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("method")},
	{name: "step4/method null", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":null}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step4/method array", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":["describe"]}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step4/unknown method: call", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"call"}`, wantCode: perr.MethodNotSupported, wantID: r1, wantDetails: supportedMethods},
	{name: "step4/unknown method: DESCRIBE", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"DESCRIBE"}`, wantCode: perr.MethodNotSupported, wantID: r1, wantDetails: supportedMethods},
	{name: "step4/unknown method: empty", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":""}`, wantCode: perr.MethodNotSupported, wantID: r1, wantDetails: supportedMethods},
	{name: "step4/unknown method: trailing space", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke ","capability":"c"}`, wantCode: perr.MethodNotSupported, wantID: r1, wantDetails: supportedMethods},
	{name: "step4/unknown method: Invoke", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"Invoke","capability":"c"}`, wantCode: perr.MethodNotSupported, wantID: r1},
	{name: "step4/order: unknown method and malformed invoke fields", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"call","capability":7,"session":1}`, wantCode: perr.MethodNotSupported, wantID: r1},
	{name: "step4/order: method missing and unknown critical name", step: 4,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","critical":["priority"]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("method")},

	// Step 5: the method's fields, then critical. invoke:
	{name: "step5/accepted: invoke", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","session":"tok","capability":"approve@order","input":{"record":"ord_17","note":"checked"}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "req_02", Method: schema.MethodInvoke, Session: "tok", HasSession: true,
			Capability: "approve@order", Input: map[string]any{"record": "ord_17", "note": "checked"}}},
	{name: "step5/accepted: input values keep their JSON types", step: 0,
		raw: invokeHead + `,"capability":"c","input":{"n":1.50,"big":12345678901234567890,"e":-1e-3,"t":true,"z":null,"l":[1,"a",{}],"o":{"s":"<&>"}}}`,
		wantReq: invokeReq("r1", "c", map[string]any{"n": json.Number("1.50"), "big": json.Number("12345678901234567890"),
			"e": json.Number("-1e-3"), "t": true, "z": nil, "l": []any{json.Number("1"), "a", map[string]any{}}, "o": map[string]any{"s": "<&>"}})},
	{name: "step5/accepted: input absent is {}", step: 0,
		raw: invokeHead + `,"capability":"c"}`, wantReq: invokeReq("r1", "c", map[string]any{})},
	{name: "step5/accepted: input empty object", step: 0,
		raw: invokeHead + `,"capability":"c","input":{}}`, wantReq: invokeReq("r1", "c", map[string]any{})},
	{name: "step5/invoke without capability", step: 5,
		raw: invokeHead + `,"input":{}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/capability number", step: 5,
		raw: invokeHead + `,"capability":7}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/capability null", step: 5,
		raw: invokeHead + `,"capability":null}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/capability empty", step: 5,
		raw: invokeHead + `,"capability":""}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/accepted: capability 256 bytes", step: 0,
		raw: invokeHead + `,"capability":"` + strings.Repeat("c", 256) + `"}`, wantReq: invokeReq("r1", strings.Repeat("c", 256), nil)},
	{name: "step5/capability 257 bytes", step: 5,
		raw: invokeHead + `,"capability":"` + strings.Repeat("c", 257) + `"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/capability 86 three-byte runes is 258 bytes", step: 5,
		raw: invokeHead + `,"capability":"` + strings.Repeat("订", 86) + `"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/accepted: capability with non-ASCII", step: 0,
		raw: invokeHead + `,"capability":"approve@订单"}`, wantReq: invokeReq("r1", "approve@订单", nil)},
	{name: "step5/capability with a control char", step: 5,
		raw: invokeHead + `,"capability":"cart\u0007add"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/capability with a newline", step: 5,
		raw: invokeHead + `,"capability":"cart\nadd"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/capability with DEL", step: 5,
		raw: invokeHead + `,"capability":"cart\u007f"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/capability with a C1 control", step: 5,
		raw: invokeHead + "," + `"capability":"cart` + "\u0085" + `"}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/input array", step: 5,
		raw: invokeHead + `,"capability":"c","input":[]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("input")},
	{name: "step5/input string", step: 5,
		raw: invokeHead + `,"capability":"c","input":"{}"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("input")},
	{name: "step5/input null", step: 5,
		raw: invokeHead + `,"capability":"c","input":null}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("input")},
	{name: "step5/input number", step: 5,
		raw: invokeHead + `,"capability":"c","input":0}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/input false", step: 5,
		raw: invokeHead + `,"capability":"c","input":false}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/accepted: resume", step: 0,
		raw:     invokeHead + `,"capability":"c","resume":"rs_1"}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodInvoke, Capability: "c", Input: map[string]any{}, Resume: "rs_1", HasResume: true}},
	{name: "step5/accepted: resume 512 bytes", step: 0,
		raw:     invokeHead + `,"capability":"c","resume":"` + strings.Repeat("r", 512) + `"}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodInvoke, Capability: "c", Input: map[string]any{}, Resume: strings.Repeat("r", 512), HasResume: true}},
	{name: "step5/resume number", step: 5,
		raw: invokeHead + `,"capability":"c","resume":1}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("resume")},
	{name: "step5/resume null", step: 5,
		raw: invokeHead + `,"capability":"c","resume":null}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/resume empty", step: 5,
		raw: invokeHead + `,"capability":"c","resume":""}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("resume")},
	{name: "step5/resume 513 bytes", step: 5,
		raw: invokeHead + `,"capability":"c","resume":"` + strings.Repeat("r", 513) + `"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("resume")},

	// Step 5: session (both methods).
	{name: "step5/accepted: session on describe", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":"opaque.token"}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Session: "opaque.token", HasSession: true}},
	{name: "step5/accepted: session empty string is present", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":""}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, HasSession: true}},
	{name: "step5/accepted: session 8192 bytes", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":"` + strings.Repeat("s", 8192) + `"}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Session: strings.Repeat("s", 8192), HasSession: true}},
	{name: "step5/session 8193 bytes", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":"` + strings.Repeat("s", 8193) + `"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("session")},
	{name: "step5/session number", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":42}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("session")},
	{name: "step5/session null", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","session":null}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("session")},
	{name: "step5/session object", step: 5,
		raw: invokeHead + `,"capability":"c","session":{"token":"t"}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("session")},

	// Step 5: describe options.
	{name: "step5/accepted: describe", step: 0, raw: describeR1, wantReq: describeReq("r1")},
	{name: "step5/accepted: options.maxRecords 50", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":50}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Options: schema.DescribeOptions{MaxRecords: intp(50)}}},
	{name: "step5/accepted: options.maxRecords 0", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":0}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Options: schema.DescribeOptions{MaxRecords: intp(0)}}},
	{name: "step5/accepted: options.maxRecords 10000", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":10000}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Options: schema.DescribeOptions{MaxRecords: intp(10000)}}},
	{name: "step5/accepted: options.maxRecords 1e2 is 100", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":1e2}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Options: schema.DescribeOptions{MaxRecords: intp(100)}}},
	{name: "step5/accepted: options.maxRecords 20.0 is 20", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":20.0}}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Options: schema.DescribeOptions{MaxRecords: intp(20)}}},
	{name: "step5/accepted: options empty and unknown options ignored", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"depth":"full"}}`, wantReq: describeReq("r1")},
	{name: "step5/options array", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":[]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options")},
	{name: "step5/options string", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":"maxRecords=5"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options")},
	{name: "step5/options null", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":null}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options")},
	{name: "step5/options.maxRecords negative", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":-1}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options.maxRecords")},
	{name: "step5/options.maxRecords 1.5", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":1.5}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options.maxRecords")},
	{name: "step5/options.maxRecords string", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":"10"}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options.maxRecords")},
	{name: "step5/options.maxRecords 10001", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":10001}}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("options.maxRecords")},
	{name: "step5/options.maxRecords 1e400 overflows", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":1e400}}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/options.maxRecords beyond int64", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":99999999999999999999}}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/options.maxRecords null", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":null}}`, wantCode: perr.InvalidRequest, wantID: r1},

	// Step 5: critical.
	{name: "step5/critical not an array", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":"options"}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("critical")},
	{name: "step5/critical null", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":null}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("critical")},
	{name: "step5/critical with a number", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":["id",1]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("critical")},
	{name: "step5/critical unknown name", step: 5,
		raw:      `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","priority":"high","critical":["priority"]}`,
		wantCode: perr.InvalidRequest, wantID: r1, wantDetails: map[string]any{"field": "critical", "name": "priority"}},
	{name: "step5/critical invoke-only name on describe", step: 5,
		raw:      `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":["capability"]}`,
		wantCode: perr.InvalidRequest, wantID: r1, wantDetails: map[string]any{"field": "critical", "name": "capability"}},
	{name: "step5/critical input on describe", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":["input"]}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/critical describe-only name on invoke", step: 5,
		raw:      invokeHead + `,"capability":"c","critical":["input","options"]}`,
		wantCode: perr.InvalidRequest, wantID: r1, wantDetails: map[string]any{"field": "critical", "name": "options"}},
	{name: "step5/critical names are case sensitive", step: 5,
		raw: invokeHead + `,"capability":"c","critical":["Input"]}`, wantCode: perr.InvalidRequest, wantID: r1},
	{name: "step5/accepted: critical known names on describe", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":["protocol","id","method","session","critical","options"]}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe,
			Critical: []string{"protocol", "id", "method", "session", "critical", "options"}}},
	{name: "step5/accepted: critical known names on invoke", step: 0,
		raw: invokeHead + `,"capability":"c","critical":["capability","input","resume","session"]}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodInvoke, Capability: "c", Input: map[string]any{},
			Critical: []string{"capability", "input", "resume", "session"}}},
	{name: "step5/accepted: critical empty", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":[]}`, wantReq: describeReq("r1")},
	{name: "step5/accepted: critical MaxCritical names", step: 0,
		raw:     `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":` + criticalNames(schema.MaxCritical) + `}`,
		wantReq: &wire.Request{Protocol: schema.Protocol, ID: "r1", Method: schema.MethodDescribe, Critical: strings.Fields(strings.Repeat("id ", schema.MaxCritical))}},
	{name: "step5/critical MaxCritical+1 names", step: 5,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","critical":` + criticalNames(schema.MaxCritical+1) + `}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("critical")},

	// Step 5: tolerant reader.
	{name: "step5/accepted: unknown non-critical fields ignored", step: 0,
		raw:     invokeHead + `,"capability":"c","trace":{"span":"abc"},"x-extra":[1,2,3],"ID":5,"Method":null}`,
		wantReq: invokeReq("r1", "c", nil)},
	{name: "step5/accepted: invoke fields on describe ignored", step: 0,
		raw: `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","capability":7,"input":"x","resume":null}`, wantReq: describeReq("r1")},
	{name: "step5/accepted: describe fields on invoke ignored", step: 0,
		raw: invokeHead + `,"capability":"c","options":"bad"}`, wantReq: invokeReq("r1", "c", nil)},
	{name: "step5/order: bad capability before unknown critical name", step: 5,
		raw: invokeHead + `,"capability":"","critical":["priority"]}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("capability")},
	{name: "step5/order: bad session before missing capability", step: 5,
		raw: invokeHead + `,"session":5}`, wantCode: perr.InvalidRequest, wantID: r1, wantDetails: field("session")},
}

func TestDecodeRequestTable(t *testing.T) {
	names := map[string]bool{}
	perStep := map[int]int{}
	for _, tc := range decodeCases {
		if names[tc.name] {
			t.Errorf("duplicate case name %q", tc.name)
		}
		names[tc.name] = true
		perStep[tc.step]++
	}
	if len(decodeCases) < 75 {
		t.Errorf("the table has %d cases, want at least 75", len(decodeCases))
	}
	t.Logf("cases per step: %v (total %d)", perStep, len(decodeCases))
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			checkCase(t, tc)
		})
	}
}

func checkCase(t *testing.T, tc decodeCase) {
	t.Helper()
	if !strings.HasPrefix(tc.name, fmt.Sprintf("step%d/", tc.step)) && tc.step != 0 {
		t.Fatalf("case name must start with step%d/", tc.step)
	}
	if (tc.step == 0) != (tc.wantCode == "") || (tc.step == 0) != (tc.wantReq != nil) {
		t.Fatalf("bad case: step %d, wantCode %q, wantReq set %v", tc.step, tc.wantCode, tc.wantReq != nil)
	}
	req, rej := wire.DecodeRequest([]byte(tc.raw))
	if tc.step == 0 {
		if rej != nil {
			t.Fatalf("rejected at step %d (%s): %s; want accepted", rej.Step, rej.Code, rej.Message)
		}
		if diff := cmp.Diff(tc.wantReq, req); diff != "" {
			t.Fatalf("request mismatch (-want +got):\n%s", diff)
		}
		return
	}
	if req != nil {
		t.Fatalf("accepted %+v; want step %d %s", req, tc.step, tc.wantCode)
	}
	if rej == nil {
		t.Fatal("neither a request nor a rejection")
	}
	if rej.Step != tc.step || rej.Code != tc.wantCode {
		t.Errorf("rejected at step %d with %s (%s); want step %d with %s", rej.Step, rej.Code, rej.Message, tc.step, tc.wantCode)
	}
	if diff := cmp.Diff(tc.wantID, rej.ID); diff != "" {
		t.Errorf("rejection id (-want +got):\n%s", diff)
	}
	checkResponse(t, rej, tc.wantCode, tc.wantID, tc.wantDetails)
}

// checkResponse encodes the rejection's response and checks it as a client
// would read it (docs/protocol.md §3.2).
func checkResponse(t *testing.T, rej *wire.Rejection, wantCode perr.Code, wantID *string, wantDetails map[string]any) {
	t.Helper()
	b, err := schema.Encode(rej.Response())
	if err != nil {
		t.Fatalf("Encode(response): %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var resp map[string]any
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("response %s does not decode: %v", b, err)
	}
	if resp["protocol"] != schema.Protocol {
		t.Errorf("response protocol = %v; want %q in %s", resp["protocol"], schema.Protocol, b)
	}
	if ok, present := resp["ok"]; !present || ok != false {
		t.Errorf("response ok = %v; want false in %s", ok, b)
	}
	if _, present := resp["result"]; present {
		t.Errorf("ok:false response has a result: %s", b)
	}
	id, present := resp["id"]
	switch {
	case !present:
		t.Errorf("response has no id: %s", b)
	case wantID == nil && id != nil:
		t.Errorf("response id = %v; want null in %s", id, b)
	case wantID != nil && id != *wantID:
		t.Errorf("response id = %v; want %q in %s", id, *wantID, b)
	}
	e, _ := resp["error"].(map[string]any)
	if e == nil {
		t.Fatalf("response has no error object: %s", b)
	}
	if e["code"] != string(wantCode) {
		t.Errorf("error.code = %v; want %s in %s", e["code"], wantCode, b)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error.message is empty in %s", b)
	}
	if wantDetails != nil {
		details, _ := e["details"].(map[string]any)
		for k, want := range wantDetails {
			if diff := cmp.Diff(want, details[k]); diff != "" {
				t.Errorf("error.details.%s (-want +got):\n%s\nin %s", k, diff, b)
			}
		}
	}
}

// TestDecodeRequestValue checks that a request that arrives already parsed
// is judged exactly like its JSON text (docs/protocol.md §3.1).
func TestDecodeRequestValue(t *testing.T) {
	tests := []struct {
		name  string
		value any
		text  string
	}{
		{
			name: "accepted invoke",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "invoke", "capability": "approve@order",
				"input": map[string]any{"n": 1.5, "k": 3, "list": []any{1, "a<b>&", nil, true}, "o": map[string]any{}}},
			text: `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"approve@order",` +
				`"input":{"n":1.5,"k":3,"list":[1,"a<b>&",null,true],"o":{}}}`,
		},
		{
			name:  "accepted describe with options and critical",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "describe", "options": map[string]any{"maxRecords": 50}, "critical": []string{"options"}},
			text:  `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","options":{"maxRecords":50},"critical":["options"]}`,
		},
		{
			name:  "unsupported protocol",
			value: map[string]any{"protocol": "pling.surface/0.2", "id": "r1", "method": "describe"},
			text:  `{"protocol":"pling.surface/0.2","id":"r1","method":"describe"}`,
		},
		{
			name:  "id a number",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": 7, "method": "describe"},
			text:  `{"protocol":"pling.surface/0.1","id":7,"method":"describe"}`,
		},
		{
			name:  "unknown method",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "call"},
			text:  `{"protocol":"pling.surface/0.1","id":"r1","method":"call"}`,
		},
		{
			name:  "input null",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "invoke", "capability": "c", "input": nil},
			text:  `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"c","input":null}`,
		},
		{
			name:  "not an object",
			value: []any{"protocol"},
			text:  `["protocol"]`,
		},
		{
			name:  "nil",
			value: nil,
			text:  `null`,
		},
		{
			// Regression: the value was encoded with json.Marshal, whose HTML
			// escaping made <, > and & six bytes each, so this value was
			// rejected as too_large while its 300 KB text was accepted.
			name:  "html characters count once against MaxRequestBytes",
			value: map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "invoke", "capability": "c", "input": map[string]any{"html": strings.Repeat("<&>", 100000)}},
			text:  `{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"c","input":{"html":"` + strings.Repeat("<&>", 100000) + `"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantReq, wantRej := wire.DecodeRequest([]byte(tt.text))
			if wantRej != nil && wantRej.Step == 1 && tt.text != "null" && tt.text != `["protocol"]` {
				t.Fatalf("bad test: the text is rejected at step 1: %v", wantRej.Details)
			}
			gotReq, gotRej := wire.DecodeRequestValue(tt.value)
			if diff := cmp.Diff(wantReq, gotReq); diff != "" {
				t.Errorf("request (-text +value):\n%s", diff)
			}
			if diff := cmp.Diff(wantRej, gotRej); diff != "" {
				t.Errorf("rejection (-text +value):\n%s", diff)
			}
		})
	}

	t.Run("unencodable value", func(t *testing.T) {
		req, rej := wire.DecodeRequestValue(map[string]any{"protocol": "pling.surface/0.1", "id": "r1", "method": "describe", "x": make(chan int)})
		if req != nil || rej == nil || rej.Step != 1 || rej.Code != perr.InvalidRequest || rej.ID != nil {
			t.Fatalf("got (%+v, %+v); want a step 1 INVALID_REQUEST with id null", req, rej)
		}
		checkResponse(t, rej, perr.InvalidRequest, nil, reason("unencodable"))
	})
}

// TestEncodeDeterministic checks that Encode gives the same bytes for the
// same value every time, with keys sorted and no HTML escaping (docs/hosts.md
// §5 "Deterministic bytes").
func TestEncodeDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%03d", i)
	}
	build := func() map[string]any {
		m := map[string]any{}
		for _, i := range rng.Perm(len(keys)) {
			m[keys[i]] = map[string]any{"z": i, "a": []any{keys[i], "<&>"}, "m": keys[len(keys)-1-i]}
		}
		return m
	}
	first, err := schema.Encode(build())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		b, err := schema.Encode(build())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, b) {
			t.Fatalf("encoding %d differs:\n%s\nvs\n%s", i, first, b)
		}
	}
	if bytes.HasSuffix(first, []byte("\n")) {
		t.Error("Encode output ends with a newline")
	}

	got, err := schema.Encode(map[string]any{"b": "<a href=\"x\">&amp;</a>", "a": 1, "c": []string{"<", ">", "&"}, "\u2028": "é"})
	if err != nil {
		t.Fatal(err)
	}
	// Keys sort by bytes: U+2028 (E2 80 A8) after ASCII.
	const want = `{"a":1,"b":"<a href=\"x\">&amp;</a>","c":["<",">","&"],"\u2028":"é"}`
	if string(got) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}

	// A response encodes its fields in declaration order.
	rej := &wire.Rejection{Step: 2, Code: perr.ProtocolVersionUnsupported, ID: strp("r1"), Message: "protocol <0.2> & more",
		Details: map[string]any{"supported": []string{schema.Protocol}}}
	got, err = schema.Encode(rej.Response())
	if err != nil {
		t.Fatal(err)
	}
	const wantResp = `{"protocol":"pling.surface/0.1","id":"r1","ok":false,"error":{"code":"PROTOCOL_VERSION_UNSUPPORTED","message":"protocol <0.2> & more","details":{"supported":["pling.surface/0.1"]}}}`
	if string(got) != wantResp {
		t.Errorf("Encode(response) =\n%s\nwant\n%s", got, wantResp)
	}
}
