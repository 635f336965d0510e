package artifact_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// surfaceSchema compiles the checked-in surface.schema.json with a real
// validator (draft 2020-12, the document checked against its metaschema).
// def is "" for the whole document or a $defs name.
type surfaceSchema struct {
	c  *jsonschema.Compiler
	id string
}

func loadSchema(t *testing.T) *surfaceSchema {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	if id == "" {
		t.Fatal("surface.schema.json has no $id")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	return &surfaceSchema{c: c, id: id}
}

func (s *surfaceSchema) compile(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	loc := s.id
	if def != "" {
		loc += "#/$defs/" + def
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		t.Fatalf("compiling %s: %v", loc, err)
	}
	return sch
}

// validate checks JSON text against sch.
func validate(t *testing.T, sch *jsonschema.Schema, text []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("example is not JSON: %v\n%s", err, text)
	}
	return sch.Validate(v)
}

// reason is a leaf of a validation error: where in the instance, and which
// keyword failed.
type reason struct {
	at   string
	kind jsonschema.ErrorKind
}

func (r reason) String() string {
	return fmt.Sprintf("%s %T", r.at, r.kind)
}

func leaves(e *jsonschema.ValidationError) []reason {
	if len(e.Causes) == 0 {
		at := ""
		for _, tok := range e.InstanceLocation {
			at += "/" + tok
		}
		return []reason{{at, e.ErrorKind}}
	}
	var out []reason
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// example is a named document and whether the schema must accept it. A
// rejected one names the failure it must produce, so it cannot pass by
// failing for an unrelated reason. A request is also given to the Go
// decoder, which must agree.
type example struct {
	name    string
	rule    string // the spec rule it checks
	request bool
	valid   bool
	want    reason // for an invalid example
	json    string
}

const describeResult = `{
  "revision": "r41",
  "capabilities": [
    {"id": "cart.add", "title": "Add to cart", "risk": "write",
     "inputSchema": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}},
    {"id": "approve@order", "title": "Approve order", "risk": "write",
     "inputSchema": {"type": "object", "properties": {"note": {"type": "string"}}},
     "record": {"kind": "order", "template": "approve:{record}", "total": 240,
                "visible": ["ord_1", "ord_2"], "offscreen": 238}}
  ],
  "context": {
    "page": {"url": "https://shop.example/orders", "title": "Orders"},
    "regions": [{"id": "orders", "title": "Orders", "active": true}],
    "records": {"order": {"total": 240, "items": [{"id": "ord_1", "label": "#1001 · pending"}]}},
    "states": {"cart.count": 3},
    "feedback": [{"level": "error", "message": "Card declined"}],
    "unavailable": [{"id": "checkout", "reason": "Cart is empty"}],
    "guides": [{"target": "checkout", "label": "Checkout button"}]
  }
}`

func ok(result string) string {
	return `{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":` + result + `}`
}

func failure(id, errJSON string) string {
	return `{"protocol":"pling.surface/0.1","id":` + id + `,"ok":false,"error":` + errJSON + `}`
}

var examples = []example{
	// Valid requests (§3.1).
	{name: "describe minimal", rule: "§3.1", request: true, valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"describe"}`},
	{name: "describe with session options critical", rule: "§3.1", request: true, valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"a.b:c-d_1","method":"describe","session":"tok",
		        "options":{"maxRecords":50},"critical":["options"]}`},
	{name: "invoke as in the spec", rule: "§3.1", request: true, valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","session":"<opaque token>",
		        "capability":"approve@order","input":{"record":"ord_17","note":"checked"}}`},
	{name: "invoke with resume and no input", rule: "§3.1, §3.5", request: true, valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"req_03","method":"invoke","capability":"checkout","resume":"rs_1"}`},
	{name: "request with an unknown member", rule: "§3.1 tolerant reader", request: true, valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"req_04","method":"describe","trace":"x"}`},

	// Valid responses (§3.2, §3.4, §3.5).
	{name: "describe result with a folded capability", rule: "§3.4", valid: true, json: ok(describeResult)},
	{name: "describe result truncated", rule: "§3.4 bounded", valid: true,
		json: ok(`{"revision":"r1","capabilities":[],"context":{},"truncated":{"reasons":["capabilities"],"omittedCapabilities":3}}`)},
	{name: "invoke success with evidence and observation", rule: "§3.5", valid: true,
		json: ok(`{"value":{"orderId":"ord_17"},
		  "evidence":{"capability":"approve@order","record":"ord_17","records":["ord_17"],
		    "expectations":[{"state":"order.status","condition":"equals approved","before":"pending","after":"approved","met":true}],
		    "summary":"Order #1001 approved"},
		  "observation":{"states":{"order.status":{"before":"pending","after":"approved"}},
		    "feedback":[{"level":"success","message":"Approved"}],
		    "navigation":{"from":"/orders","to":"/orders/17"},
		    "capabilitiesChanged":true,"revision":"r42"}}`)},
	{name: "invoke success with null value", rule: "§3.5", valid: true,
		json: ok(`{"value":null,"observation":{"capabilitiesChanged":false,"revision":"r41"}}`)},
	{name: "business failure EXPECTATION_FAILED", rule: "§3.5", valid: true,
		json: ok(`{"error":{"code":"EXPECTATION_FAILED","message":"The order is still pending",
		  "details":{"state":"order.status"}},"observation":{"capabilitiesChanged":false,"revision":"r41"}}`)},
	{name: "business failure STEP_FAILED with resume", rule: "§3.5", valid: true,
		json: ok(`{"error":{"code":"STEP_FAILED","message":"Step 2 of 3 failed","details":{"step":2},"resume":"rs_9f"}}`)},
	{name: "RATE_LIMITED with retryAfterMs", rule: "§3.2, §3.3 step 7", valid: true,
		json: failure(`"req_02"`, `{"code":"RATE_LIMITED","message":"Too many requests","retryAfterMs":1200}`)},
	{name: "INVALID_REQUEST with id null", rule: "§3.2, §3.3 step 1", valid: true,
		json: failure(`null`, `{"code":"INVALID_REQUEST","message":"The request is not a JSON object","details":{"reason":"malformed_json"}}`)},
	{name: "PROTOCOL_VERSION_UNSUPPORTED lists supported", rule: "§3.3 step 2", valid: true,
		json: failure(`"req_02"`, `{"code":"PROTOCOL_VERSION_UNSUPPORTED","message":"protocol version is not supported","details":{"supported":["pling.surface/0.1"]}}`)},
	{name: "response with an unknown member", rule: "§6 readers ignore unknown response fields", valid: true,
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"value":1,"extra":true},"served":"edge"}`},

	// Invalid requests.
	{name: "wrong protocol", rule: "§3.1 protocol", request: true,
		want: reason{"/protocol", &kind.Const{}},
		json: `{"protocol":"pling.surface/0.2","id":"req_01","method":"describe"}`},
	{name: "id with a space", rule: "§3.1 id", request: true,
		want: reason{"/id", &kind.Pattern{}},
		json: `{"protocol":"pling.surface/0.1","id":"req 01","method":"describe"}`},
	{name: "id empty", rule: "§3.1 id", request: true,
		want: reason{"/id", &kind.Pattern{}},
		json: `{"protocol":"pling.surface/0.1","id":"","method":"describe"}`},
	{name: "id of 129 chars", rule: "§3.1 id", request: true,
		want: reason{"/id", &kind.Pattern{}},
		json: `{"protocol":"pling.surface/0.1","id":"` + strings.Repeat("a", 129) + `","method":"describe"}`},
	{name: "id a number", rule: "§3.1 id", request: true,
		want: reason{"/id", &kind.Type{}},
		json: `{"protocol":"pling.surface/0.1","id":7,"method":"describe"}`},
	{name: "unknown method", rule: "§3.1 method", request: true,
		want: reason{"/method", &kind.Const{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"delete"}`},
	{name: "request without id", rule: "§3.1 id required", request: true,
		want: reason{"", &kind.Required{}},
		json: `{"protocol":"pling.surface/0.1","method":"describe"}`},
	{name: "invoke without capability", rule: "§3.1 capability required", request: true,
		want: reason{"", &kind.Required{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"invoke","input":{}}`},
	{name: "invoke input not an object", rule: "§3.1 input", request: true,
		want: reason{"/input", &kind.Type{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"invoke","capability":"x","input":[1]}`},
	{name: "invoke empty resume", rule: "§3.1 resume", request: true,
		want: reason{"/resume", &kind.MinLength{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"invoke","capability":"x","resume":""}`},
	{name: "maxRecords over the bound", rule: "§3.1 options", request: true,
		want: reason{"/options/maxRecords", &kind.Maximum{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_01","method":"describe","options":{"maxRecords":10001}}`},

	// Invalid responses.
	{name: "unknown code in SurfaceFailure", rule: "§5 closed registry",
		want: reason{"/error/code", &kind.Enum{}},
		json: failure(`"req_02"`, `{"code":"TEAPOT","message":"no"}`)},
	{name: "Action code as a protocol failure", rule: "§6 separate namespaces",
		want: reason{"/error/code", &kind.Enum{}},
		json: failure(`"req_02"`, `{"code":"EXPECTATION_FAILED","message":"no"}`)},
	{name: "Surface code in result.error", rule: "§6 separate namespaces",
		want: reason{"/result/error/code", &kind.Enum{}},
		json: ok(`{"error":{"code":"RATE_LIMITED","message":"Too many requests"}}`)},
	{name: "failure without message", rule: "§3.2",
		want: reason{"/error", &kind.Required{}},
		json: failure(`"req_02"`, `{"code":"INTERNAL_ERROR"}`)},
	{name: "negative retryAfterMs", rule: "§3.3 step 7",
		want: reason{"/error/retryAfterMs", &kind.Minimum{}},
		json: failure(`"req_02"`, `{"code":"RATE_LIMITED","message":"Too many requests","retryAfterMs":-1}`)},
	{name: "response without id", rule: "§3.2 id echoes or is null",
		want: reason{"", &kind.Required{}},
		json: `{"protocol":"pling.surface/0.1","ok":false,"error":{"code":"INVALID_REQUEST","message":"x"}}`},
	{name: "response without protocol", rule: "§3.2",
		want: reason{"", &kind.Required{}},
		json: `{"id":"req_02","ok":true,"result":{"value":1}}`},
	{name: "response with wrong protocol", rule: "§3.2",
		want: reason{"/protocol", &kind.Const{}},
		json: `{"protocol":"pling.surface/1.0","id":"req_02","ok":true,"result":{"value":1}}`},
	{name: "ok true without result", rule: "§3.2 ok:true carries result",
		want: reason{"", &kind.Required{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":true}`},
	{name: "ok true with error", rule: "§3.2 ok:true carries no error",
		want: reason{"/error", &kind.FalseSchema{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"value":1},"error":{"code":"INTERNAL_ERROR","message":"x"}}`},
	{name: "ok true with id null", rule: "§3.2 id is null only when unusable",
		want: reason{"/id", &kind.Type{}},
		json: `{"protocol":"pling.surface/0.1","id":null,"ok":true,"result":{"value":1}}`},
	{name: "ok false without error", rule: "§3.2 ok:false carries error",
		want: reason{"", &kind.Required{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":false}`},
	{name: "ok false with result", rule: "§3.2 ok:false carries no result",
		want: reason{"/result", &kind.FalseSchema{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":false,"result":{"value":1},"error":{"code":"INTERNAL_ERROR","message":"x"}}`},
	{name: "ok not a boolean", rule: "§3.2",
		want: reason{"/ok", &kind.Type{}},
		json: `{"protocol":"pling.surface/0.1","id":"req_02","ok":"true","result":{"value":1}}`},
	{name: "describe result without capabilities", rule: "§3.4",
		want: reason{"/result", &kind.Required{}},
		json: ok(`{"revision":"r1","context":{}}`)},
	{name: "describe result with an unknown risk", rule: "§3.4, §4.1 risk",
		want: reason{"/result/capabilities/0/risk", &kind.Enum{}},
		json: ok(`{"revision":"r1","capabilities":[{"id":"x","title":"X","risk":"dangerous","inputSchema":{"type":"object"}}],"context":{}}`)},
	{name: "folded capability without template", rule: "§3.4, §4.1 record",
		want: reason{"/result/capabilities/0/record", &kind.Required{}},
		json: ok(`{"revision":"r1","capabilities":[{"id":"a@o","title":"A","risk":"write","inputSchema":{"type":"object"},
		  "record":{"kind":"order","total":1,"visible":["o1"],"offscreen":0}}],"context":{}}`)},
	{name: "observation without revision", rule: "§3.5",
		want: reason{"/result/observation", &kind.Required{}},
		json: ok(`{"value":1,"observation":{"capabilitiesChanged":false}}`)},
	{name: "not an object", rule: "§3.3 step 1",
		want: reason{"", &kind.Type{}},
		json: `["pling.surface/0.1"]`},
}

// TestSchemaExamples validates named documents against the checked-in
// schema. A request is also decoded by wire.DecodeRequest, which must
// agree, so the schema is no looser or stricter than the decoder on them.
func TestSchemaExamples(t *testing.T) {
	s := loadSchema(t)
	root := s.compile(t, "")
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			err := validate(t, root, []byte(ex.json))
			switch {
			case ex.valid && err != nil:
				t.Errorf("%s: rejected a valid example: %v", ex.rule, err)
			case !ex.valid && err == nil:
				t.Errorf("%s: accepted an invalid example", ex.rule)
			case !ex.valid:
				ve, isVE := err.(*jsonschema.ValidationError)
				if !isVE {
					t.Fatalf("%s: %v", ex.rule, err)
				}
				got := leaves(ve)
				found := false
				for _, r := range got {
					if r.at == ex.want.at && reflect.TypeOf(r.kind) == reflect.TypeOf(ex.want.kind) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: rejected, but not with %v; got %v", ex.rule, ex.want, got)
				}
			}
			if ex.request {
				_, rej := wire.DecodeRequest([]byte(ex.json))
				if ex.valid && rej != nil {
					t.Errorf("the decoder rejects what the schema accepts: %s %s", rej.Code, rej.Message)
				}
				if !ex.valid && rej == nil {
					t.Errorf("the decoder accepts what the schema rejects")
				}
			}
		})
	}
}

func strp(s string) *string { return &s }

func intp(n int) *int { return &n }

func floatp(f float64) *float64 { return &f }

func boolp(b bool) *bool { return &b }

// goDescription is a SurfaceDescription built in Go with every member set.
func goDescription() schema.SurfaceDescription {
	return schema.SurfaceDescription{
		Revision: "r41",
		Capabilities: []schema.SurfaceCapability{
			{ID: "approve@order", Title: "Approve order", Description: "Approve one order", Risk: schema.RiskWrite,
				InputSchema: schema.JSONSchema{Type: "object",
					Properties: map[string]*schema.PropertySchema{
						"note": {Type: "string", Description: "a note", MinLength: intp(0), MaxLength: intp(200), Pattern: "^.*$"},
						"qty":  {Type: "integer", Minimum: floatp(1), Maximum: floatp(9), Default: 1},
						"tags": {Type: "array", Items: &schema.PropertySchema{Type: "string", Enum: []any{"a", "b"}}, MinItems: intp(0), MaxItems: intp(3)},
					},
					Required: []string{"qty"}, AdditionalProperties: boolp(false)},
				Record: &schema.RecordTemplate{Kind: "order", Template: "approve:{record}", Total: 240,
					Visible: []string{"ord_1", "ord_2"}, Offscreen: 238, AllowOffscreen: true, Truncated: true},
				Approval: true, Handoff: true, Steps: 2},
			{ID: "cart.add", Title: "Add to cart", Risk: schema.RiskRead, InputSchema: schema.JSONSchema{Type: "object"}},
			{ID: "order.delete", Title: "Delete order", Risk: schema.RiskDestructive, InputSchema: schema.JSONSchema{Type: "object"}},
		},
		Context: schema.SurfaceContext{
			Page:        &schema.PageInfo{URL: "https://shop.example/orders", Title: "Orders"},
			Regions:     []schema.Region{{ID: "orders", Title: "Orders", Active: true, Modal: false}},
			Records:     map[string]schema.RecordSet{"order": {Total: 240, Items: []schema.RecordItem{{ID: "ord_1", Label: "#1001", Offscreen: false}}, Truncated: true}},
			States:      map[string]any{"cart.count": 3, "user": map[string]any{"name": "x"}},
			Feedback:    []schema.Feedback{{Level: "info", Message: "Saved"}, {Level: "warning", Message: "Low stock"}},
			Unavailable: []schema.Unavailable{{ID: "checkout", Reason: "Cart is empty", Code: string(perr.DuplicateActionID)}},
			Guides:      []schema.Guide{{Target: "checkout", Label: "Checkout button"}},
		},
		Truncated: &schema.Truncation{Reasons: []string{"capabilities", "bytes"}, OmittedCapabilities: 4},
	}
}

// goInvokeResults are invoke results built in Go: a full success, and a
// business failure for every canonical Action code.
func goInvokeResults() map[string]schema.SurfaceInvokeResult {
	obs := &schema.SurfaceObservation{
		States:              map[string]schema.StateChange{"order.status": {Before: "pending", After: "approved"}, "gone": {Before: 1, After: nil}},
		Feedback:            []schema.Feedback{{Level: "success", Message: "Approved"}},
		Navigation:          &schema.Navigation{From: "/orders", To: "/orders/17"},
		CapabilitiesChanged: true, Revision: "r42", Truncated: true,
	}
	out := map[string]schema.SurfaceInvokeResult{
		"success": {
			Value: map[string]any{"orderId": "ord_17"},
			Evidence: &schema.Evidence{Capability: "approve@order", Record: "ord_17", Records: []string{"ord_17"},
				Expectations: []schema.ExpectationResult{{State: "order.status", Condition: "equals approved", Before: "pending", After: "approved", Met: true}},
				Steps:        2, Handoff: "completed", Approval: "approved", Summary: "Order #1001 approved"},
			Observation: obs,
		},
		"success, zero value": {Observation: &schema.SurfaceObservation{Revision: "r41"}},
	}
	for _, c := range perr.Codes(perr.Action) {
		e := perr.New(c, "", map[string]any{"step": 2})
		f := &schema.ActionFailure{Code: string(e.Code()), Message: e.Message(), Details: e.Details()}
		if c == perr.StepFailed {
			f.Resume = "rs_9f"
		}
		out["failure "+string(c)] = schema.SurfaceInvokeResult{Error: f, Observation: obs}
	}
	return out
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := schema.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoResponsesValidate: every response the Go code makes validates, so
// the schema and the Go types cannot drift apart.
func TestGoResponsesValidate(t *testing.T) {
	s := loadSchema(t)
	root := s.compile(t, "")
	responses := map[string]schema.SurfaceResponse{}
	for _, c := range perr.Codes(perr.Surface) {
		e := perr.New(c, "", map[string]any{"field": "id"})
		if c == perr.RateLimited {
			e = e.WithRetryAfter(1200)
		}
		responses["failure "+string(c)] = wire.FailureResponse(strp("req_02"), e)
		responses["failure "+string(c)+" id null"] = wire.FailureResponse(nil, e)
	}
	if _, rej := wire.DecodeRequest([]byte(`{`)); rej != nil {
		responses["decoder rejection, step 1"] = rej.Response()
	}
	if _, rej := wire.DecodeRequest([]byte(`{"protocol":"pling.surface/9","id":"r1","method":"describe"}`)); rej != nil {
		responses["decoder rejection, step 2"] = rej.Response()
	}
	desc, err := wire.ResultResponse("req_01", goDescription())
	if err != nil {
		t.Fatal(err)
	}
	responses["describe result"] = desc
	for name, r := range goInvokeResults() {
		resp, err := wire.ResultResponse("req_02", r)
		if err != nil {
			t.Fatal(err)
		}
		responses["invoke "+name] = resp
	}
	if len(responses) < 2*len(perr.Codes(perr.Surface))+len(perr.Codes(perr.Action))+3 {
		t.Fatalf("only %d responses built", len(responses))
	}
	for name, resp := range responses {
		t.Run(name, func(t *testing.T) {
			b := encode(t, resp)
			if err := validate(t, root, b); err != nil {
				t.Errorf("%s\n%v", b, err)
			}
		})
	}
}

// TestGoDescriptionMatchesItsDef: the Go description validates against
// $defs/SurfaceDescription directly, and a Go invoke result does not: the
// oneOf of result tells the two apart.
func TestGoDescriptionMatchesItsDef(t *testing.T) {
	s := loadSchema(t)
	d := encode(t, goDescription())
	if err := validate(t, s.compile(t, "SurfaceDescription"), d); err != nil {
		t.Errorf("SurfaceDescription: %v", err)
	}
	r := encode(t, goInvokeResults()["success"])
	if err := validate(t, s.compile(t, "SurfaceDescription"), r); err == nil {
		t.Error("an invoke result validates as a SurfaceDescription")
	}
}

// TestGoValuesValidate: the values of §3.6 that no envelope carries, and
// the requests, validate against their definitions when built in Go.
func TestGoValuesValidate(t *testing.T) {
	s := loadSchema(t)
	for _, tc := range []struct {
		name string
		def  string
		v    any
	}{
		{"session", "SurfaceSession", schema.SurfaceSession{Subject: "u1", Audience: "https://shop.example", Scope: []string{"cart.*"},
			IssuedAtMs: 1, NotBeforeMs: 1, ExpiresAtMs: 2, Revoked: true}},
		{"session minimal", "SurfaceSession", schema.SurfaceSession{Subject: "u1", Scope: []string{}, ExpiresAtMs: 2}},
		{"audit event", "SurfaceAuditEvent", schema.SurfaceAuditEvent{TimeMs: 1, RequestID: strp("req_02"), Method: "invoke",
			Capability: "cart.add", Outcome: schema.OutcomeBusinessError, Code: string(perr.ExpectationFailed), DurationMs: 3}},
		{"audit event id null", "SurfaceAuditEvent", schema.SurfaceAuditEvent{TimeMs: 1, Outcome: schema.OutcomeProtocolError,
			Code: string(perr.InvalidRequest)}},
		{"audit event ok", "SurfaceAuditEvent", schema.SurfaceAuditEvent{TimeMs: 1, RequestID: strp("r"), Outcome: schema.OutcomeOK}},
		{"approval binding", "SurfaceApprovalBinding", schema.SurfaceApprovalBinding{Capability: "approve@order",
			InputDigest: "sha256:00", Session: "sha256:11", RequestID: "req_02", ExpiresAtMs: 5}},
		{"approval challenge", "SurfaceApprovalChallenge", schema.SurfaceApprovalChallenge{Binding: "sha256:22",
			Capability: "approve@order", Title: "Approve order", Risk: schema.RiskWrite, Summary: "Approve #1001", ExpiresAtMs: 5}},
		{"approval decision", "SurfaceApprovalDecision", schema.SurfaceApprovalDecision{Binding: "sha256:22", Approved: true}},
		{"describe request", "SurfaceRequest", schema.SurfaceDescribeRequest{Protocol: schema.Protocol, ID: "req_01",
			Method: schema.MethodDescribe, Session: "tok", Options: &schema.DescribeOptions{MaxRecords: intp(50)}, Critical: []string{"options"}}},
		{"invoke request", "SurfaceRequest", schema.SurfaceInvokeRequest{Protocol: schema.Protocol, ID: "req_02",
			Method: schema.MethodInvoke, Capability: "approve@order", Input: map[string]any{"record": "ord_17"}, Resume: "rs_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(t, tc.v)
			if err := validate(t, s.compile(t, tc.def), b); err != nil {
				t.Errorf("%s\n%v", b, err)
			}
			if tc.def == "SurfaceRequest" {
				if _, rej := wire.DecodeRequest(b); rej != nil {
					t.Errorf("the decoder rejects it: %s %s", rej.Code, rej.Message)
				}
			}
		})
	}
}
