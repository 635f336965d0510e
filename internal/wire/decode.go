package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/pling-go/pling/schema"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/jsonvalue"
)

// Request is an envelope that passed steps 1–5 of the check order
// (docs/protocol.md §3.3). Fields the method does not use are zero.
type Request struct {
	Protocol string
	ID       string
	Method   schema.Method
	// Session is the session token; HasSession tells an absent one from "".
	Session    string
	HasSession bool
	// Capability, Input and Resume are set for invoke. Input is never nil
	// for invoke; numbers in it are json.Number, so they keep their text.
	Capability string
	Input      map[string]any
	Resume     string
	HasResume  bool
	// Options is set for describe.
	Options  schema.DescribeOptions
	Critical []string
}

// Rejection is a protocol failure found while decoding: the step of the
// check order that stopped the request, the code, and the response id (nil
// when the id itself was unusable).
type Rejection struct {
	Step    int
	Code    perr.Code
	ID      *string
	Message string
	Details map[string]any
}

// Error returns the rejection as a registry error value.
func (r *Rejection) Error() *perr.Error {
	return perr.New(r.Code, r.Message, r.Details)
}

// Response is the ok:false response for the rejection.
func (r *Rejection) Response() schema.SurfaceResponse {
	return FailureResponse(r.ID, r.Error())
}

// understood reports whether a server understands the member name of a
// request of method m, for the critical list (docs/protocol.md §3.1): the
// members of the method's request type (request_gen.go).
func understood(m schema.Method, name string) bool {
	fs := describeMembers
	if m == schema.MethodInvoke {
		fs = invokeMembers
	}
	for _, f := range fs {
		if f == name {
			return true
		}
	}
	return false
}

// ValidID reports whether s is a well-formed request id: 1–128 chars of
// [A-Za-z0-9._:-].
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > schema.MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// DecodeRequest applies steps 1–5 of the check order to request text. It
// returns the request, or the rejection of the first step that failed.
//
// Step 1 (id null): the text is larger than schema.MaxRequestBytes, is not UTF-8,
// holds a lone surrogate escape, is not one JSON value, nests deeper than
// schema.MaxDepth, repeats a key in any object, or is not an object. Such text is
// not a usable JSON object, so no part of it (the id included) is trusted.
//
// Steps 2–5 echo the id when it is well formed, whichever step failed;
// step 3 (the id itself) answers with id null.
func DecodeRequest(data []byte) (*Request, *Rejection) {
	obj, reason := parseObject(data)
	if reason != "" {
		return nil, NotAnObject(reason)
	}
	return decodeObject(obj)
}

// The reasons of a step-1 rejection a host may give without handing the
// text over (NotAnObject): it is longer than schema.MaxRequestBytes, or it has no
// UTF-8 form (a JS string with a lone surrogate).
const (
	ReasonTooLarge    = "too_large"
	ReasonInvalidUTF8 = "invalid_utf8"
)

// NotAnObject is the step-1 rejection (id null) of request text that is
// not a usable JSON object, for the reason given (details.reason).
func NotAnObject(reason string) *Rejection {
	return &Rejection{Step: 1, Code: perr.InvalidRequest, Message: "The request is not a JSON object: " + reason,
		Details: map[string]any{"reason": reason}}
}

// DecodeRequestValue applies the same steps to a request that arrived
// already parsed (a JS object): it is encoded to JSON and takes the same
// path as text, so both forms are judged alike. It is encoded with schema.Encode,
// not json.Marshal, whose HTML escaping would grow each <, > and & to six
// bytes and so count a value larger than its JSON text (schema.MaxRequestBytes).
func DecodeRequestValue(v any) (*Request, *Rejection) {
	b, err := schema.Encode(v)
	if err != nil {
		return nil, &Rejection{Step: 1, Code: perr.InvalidRequest, Message: "The request is not a JSON object: unencodable",
			Details: map[string]any{"reason": "unencodable"}}
	}
	return DecodeRequest(b)
}

func decodeObject(obj map[string]any) (*Request, *Rejection) {
	var idp *string
	if s, ok := obj["id"].(string); ok && ValidID(s) {
		idp = &s
	}
	reject := func(step int, code perr.Code, field, msg string) *Rejection {
		var d map[string]any
		if field != "" {
			d = map[string]any{"field": field}
		}
		id := idp
		if step == 3 {
			id = nil
		}
		return &Rejection{Step: step, Code: code, ID: id, Message: msg, Details: d}
	}

	// member reads the envelope member name, which step requires to be a
	// string.
	member := func(step int, name string) (string, *Rejection) {
		v, ok := obj[name]
		if !ok {
			return "", reject(step, perr.InvalidRequest, name, name+" is required")
		}
		s, ok := v.(string)
		if !ok {
			return "", reject(step, perr.InvalidRequest, name, name+" must be a string")
		}
		return s, nil
	}

	// Step 2: protocol.
	p, rej := member(2, "protocol")
	if rej != nil {
		return nil, rej
	}
	if p != schema.Protocol {
		r := reject(2, perr.ProtocolVersionUnsupported, "", "protocol version is not supported")
		r.Details = map[string]any{"supported": append([]string(nil), schema.SupportedProtocols...)}
		return nil, r
	}

	// Step 3: id.
	if _, rej := member(3, "id"); rej != nil {
		return nil, rej
	}
	if idp == nil {
		return nil, reject(3, perr.InvalidRequest, "id", "id must be 1–128 characters of A-Z a-z 0-9 . _ : -")
	}
	req := &Request{Protocol: p, ID: *idp}

	// Step 4: method.
	m, rej := member(4, "method")
	if rej != nil {
		return nil, rej
	}
	switch schema.Method(m) {
	case schema.MethodDescribe, schema.MethodInvoke:
		req.Method = schema.Method(m)
	default:
		r := reject(4, perr.MethodNotSupported, "", "method is not supported")
		r.Details = map[string]any{"supported": []string{string(schema.MethodDescribe), string(schema.MethodInvoke)}}
		return nil, r
	}

	// Step 5: the method's members, read by the decoder generated from
	// the request types' tags (request_gen.go), then critical.
	decodeMembers := decodeDescribeMembers
	if req.Method == schema.MethodInvoke {
		decodeMembers = decodeInvokeMembers
	}
	if field, msg := decodeMembers(obj, req); field != "" {
		return nil, reject(5, perr.InvalidRequest, field, msg)
	}
	if cv, ok := obj["critical"]; ok {
		list, ok := cv.([]any)
		if !ok {
			return nil, reject(5, perr.InvalidRequest, "critical", "critical must be an array of field names")
		}
		if len(list) > schema.MaxCritical {
			return nil, reject(5, perr.InvalidRequest, "critical", fmt.Sprintf("critical may name at most %d fields", schema.MaxCritical))
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return nil, reject(5, perr.InvalidRequest, "critical", "critical must be an array of field names")
			}
			if !understood(req.Method, name) {
				r := reject(5, perr.InvalidRequest, "critical", "a critical field is not understood")
				if len(name) <= 64 && !hasControl(name) && utf8.ValidString(name) {
					r.Details["name"] = name
				}
				return nil, r
			}
			req.Critical = append(req.Critical, name)
		}
	}
	return req, nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// smallInt reads an integral JSON number in [lo, hi].
func smallInt(v any, lo, hi int) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		if i < int64(lo) || i > int64(hi) {
			return 0, false
		}
		return int(i), true
	}
	// 1e2 or 10.0: integral but not written as an integer.
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int(f), true
}

// parseObject parses request text into a JSON object, or says why it is not
// one.
func parseObject(data []byte) (map[string]any, string) {
	if len(data) > schema.MaxRequestBytes {
		return nil, ReasonTooLarge
	}
	if !utf8.Valid(data) {
		return nil, ReasonInvalidUTF8
	}
	if bytes.Contains(data, []byte(`\u`)) && jsonvalue.HasLoneSurrogate(data) {
		return nil, "invalid_unicode_escape"
	}
	v, err := jsonvalue.Parse(data, schema.MaxDepth)
	switch {
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return nil, "duplicate_key"
	case errors.Is(err, jsonvalue.ErrTooDeep):
		return nil, "too_deep"
	case errors.Is(err, jsonvalue.ErrTrailing):
		return nil, "trailing_data"
	case err != nil:
		return nil, "malformed_json"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "not_an_object"
	}
	return obj, ""
}
