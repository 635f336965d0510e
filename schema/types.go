// Package schema holds the Surface protocol wire types of pling.surface/0.1
// (docs/protocol.md §3) and the deterministic encoder. The strict request
// decoder, which only the module's own hosts call, is in internal/wire.
//
// These Go types are the one source of every schema artifact
// (docs/protocol.md §6), all written by go generate (make generate):
// surface.schema.json, ../js-shim/pling.d.ts, the result encoders and the
// request member decoder (../internal/wire/encode_gen.go and
// request_gen.go) and the
// page declaration decoders of package pagespec (pagespec/decode_gen.go).
// A second, hand-written schema is a defect. Constraints that JSON Schema and
// TypeScript must carry are written in `pling` struct tags, which the
// generator reads:
//
//	pling:"required"              the field must be present
//	pling:"pattern=…"             string pattern (JSON Schema only)
//	pling:"min=…,max=…"           string length bounds or number range
//	pling:"enum=a|b"              allowed values
//	pling:"const=…"               the only allowed value
//	pling:"nullable"              the value may be null
//	pling:"any"                   any JSON value
//	pling:"text"                  no control characters (checked by the request decoder only)
//	pling:"ref=Name"              the value is the named definition
//	pling:"oneOf=A|B"             the value is one of the named definitions
package schema

import "encoding/json"

//go:generate go run -tags plinggen ./internal/gen -schema surface.schema.json -dts ../js-shim/pling.d.ts -codec ../internal/wire/encode_gen.go -page pagespec/decode_gen.go -request ../internal/wire/request_gen.go

// Protocol is the only protocol version this build speaks.
const Protocol = "pling.surface/0.1"

// SupportedProtocols lists the versions reported in
// PROTOCOL_VERSION_UNSUPPORTED's details.supported.
var SupportedProtocols = []string{Protocol}

// Method is a Surface method.
type Method string

// The Surface methods.
const (
	MethodDescribe Method = "describe"
	MethodInvoke   Method = "invoke"
)

// Limits of the envelope (docs/protocol.md §3.1).
const (
	// MaxIDLen is the longest request id.
	MaxIDLen = 128
	// MaxCapabilityLen is the longest capability id a request may name.
	MaxCapabilityLen = 256
	// MaxSessionLen is the longest session token.
	MaxSessionLen = 8192
	// MaxResumeLen is the longest resume token.
	MaxResumeLen = 512
	// MaxRequestBytes is the largest request text accepted.
	MaxRequestBytes = 1 << 20
	// MaxDepth is the deepest nesting of arrays and objects in a request.
	MaxDepth = 64
	// MaxCritical is the most names a critical list may hold.
	MaxCritical = 32
)

// IDPattern is the request id syntax: 1–128 chars of [A-Za-z0-9._:-].
const IDPattern = `^[A-Za-z0-9._:-]{1,128}$`

// SurfaceDescribeRequest asks for a bounded snapshot of what this session may
// do.
type SurfaceDescribeRequest struct {
	Protocol string           `json:"protocol" pling:"required,const=pling.surface/0.1"`
	ID       string           `json:"id" pling:"required,pattern=^[A-Za-z0-9._:-]{1\\,128}$"`
	Method   Method           `json:"method" pling:"required,const=describe"`
	Session  string           `json:"session,omitempty" pling:"max=8192"`
	Options  *DescribeOptions `json:"options,omitempty"`
	Critical []string         `json:"critical,omitempty"`
}

// DescribeOptions narrows a description. Unknown options are ignored.
type DescribeOptions struct {
	// MaxRecords caps the record ids listed per kind (visible ids of a
	// folded capability and items of context.records).
	MaxRecords *int `json:"maxRecords,omitempty" pling:"min=0,max=10000"`
}

// SurfaceInvokeRequest runs one capability.
type SurfaceInvokeRequest struct {
	Protocol   string         `json:"protocol" pling:"required,const=pling.surface/0.1"`
	ID         string         `json:"id" pling:"required,pattern=^[A-Za-z0-9._:-]{1\\,128}$"`
	Method     Method         `json:"method" pling:"required,const=invoke"`
	Session    string         `json:"session,omitempty" pling:"max=8192"`
	Capability string         `json:"capability" pling:"required,min=1,max=256,text"`
	Input      map[string]any `json:"input,omitempty"`
	Resume     string         `json:"resume,omitempty" pling:"min=1,max=512"`
	Critical   []string       `json:"critical,omitempty"`
}

// SurfaceResponse is the response envelope: ok:true with a result, or
// ok:false with a protocol failure. A client checks ok, then result.error.
type SurfaceResponse struct {
	Protocol string `json:"protocol" pling:"required,const=pling.surface/0.1"`
	// ID echoes the request id, or is null when the id itself was unusable.
	ID     *string         `json:"id" pling:"required,nullable"`
	OK     bool            `json:"ok" pling:"required"`
	Result json.RawMessage `json:"result,omitempty" pling:"oneOf=SurfaceDescription|SurfaceInvokeResult"`
	Error  *SurfaceFailure `json:"error,omitempty"`
}

// SurfaceFailure is a protocol failure (ok:false). Its code is one of the
// Surface namespace.
type SurfaceFailure struct {
	Code         string         `json:"code" pling:"required,enum=@surface"`
	Message      string         `json:"message" pling:"required"`
	RetryAfterMs int64          `json:"retryAfterMs,omitempty" pling:"min=0"`
	Details      map[string]any `json:"details,omitempty"`
}

// SurfaceDescription is the describe result: capabilities sorted by id, and
// page context, all bounded.
type SurfaceDescription struct {
	// Revision changes whenever the exposed set changes.
	Revision     string              `json:"revision" pling:"required"`
	Capabilities []SurfaceCapability `json:"capabilities" pling:"required"`
	Context      SurfaceContext      `json:"context" pling:"required"`
	// Truncated is present when a bound cut the description.
	Truncated *Truncation `json:"truncated,omitempty"`
}

// Truncation says what a bound cut and by how much.
type Truncation struct {
	// Reason names the bound: "capabilities", "bytes", "records", ….
	Reasons []string `json:"reasons" pling:"required"`
	// Omitted counts capabilities left out of the list.
	OmittedCapabilities int `json:"omittedCapabilities,omitempty" pling:"min=0"`
}

// Risk classifies what a capability does.
type Risk string

// The risks (docs/protocol.md §4.1).
const (
	RiskRead        Risk = "read"
	RiskWrite       Risk = "write"
	RiskDestructive Risk = "destructive"
)

// SurfaceCapability is one exposed capability. A folded row action has a
// Record and takes input.record.
type SurfaceCapability struct {
	ID          string     `json:"id" pling:"required"`
	Title       string     `json:"title" pling:"required"`
	Description string     `json:"description,omitempty"`
	Risk        Risk       `json:"risk" pling:"required,enum=read|write|destructive"`
	InputSchema JSONSchema `json:"inputSchema" pling:"required"`
	// Approval is true when a person must approve each invoke.
	Approval bool `json:"approval,omitempty"`
	// Handoff is true when the action hands over to a person.
	Handoff bool `json:"handoff,omitempty"`
	// Steps counts the steps of a composite action.
	Steps int `json:"steps,omitempty" pling:"min=0"`
	// Record is set on a folded row action: pass input.record.
	Record *RecordTemplate `json:"record,omitempty"`
}

// RecordTemplate is the record metadata of a folded capability
// (docs/protocol.md §4.1): the caller passes input.record and the host rebuilds the
// concrete id from Template.
type RecordTemplate struct {
	Kind     string `json:"kind" pling:"required"`
	Template string `json:"template" pling:"required"`
	Total    int    `json:"total" pling:"required,min=0"`
	// Visible lists the ids of visible records (bounded; see Truncated).
	Visible   []string `json:"visible" pling:"required"`
	Offscreen int      `json:"offscreen" pling:"required,min=0"`
	// AllowOffscreen is true when the action may run on offscreen records.
	AllowOffscreen bool `json:"allowOffscreen,omitempty"`
	// Truncated is true when Visible was cut.
	Truncated bool `json:"truncated,omitempty"`
	// Available counts the rows in view (not offscreen; the first 200 of
	// them) on which the action's availability check says it can run;
	// absent when the action has no availability check.
	Available *int `json:"available,omitempty" pling:"min=0"`
}

// JSONSchema is the small input schema of a capability (docs/protocol.md): an
// object with properties and required names. It is not a full JSON Schema
// document; the executor still validates values.
type JSONSchema struct {
	Type       string                     `json:"type" pling:"required,const=object"`
	Properties map[string]*PropertySchema `json:"properties,omitempty"`
	Required   []string                   `json:"required,omitempty"`
	// AdditionalProperties is false: unknown params are rejected.
	AdditionalProperties *bool `json:"additionalProperties,omitempty"`
}

// PropertySchema describes one parameter.
type PropertySchema struct {
	Type        string          `json:"type,omitempty" pling:"enum=string|number|integer|boolean|object|array"`
	Description string          `json:"description,omitempty"`
	Enum        []any           `json:"enum,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	Maximum     *float64        `json:"maximum,omitempty"`
	MinLength   *int            `json:"minLength,omitempty" pling:"min=0"`
	MaxLength   *int            `json:"maxLength,omitempty" pling:"min=0"`
	Pattern     string          `json:"pattern,omitempty"`
	Items       *PropertySchema `json:"items,omitempty"`
	MinItems    *int            `json:"minItems,omitempty" pling:"min=0"`
	MaxItems    *int            `json:"maxItems,omitempty" pling:"min=0"`
	Default     any             `json:"default,omitempty" pling:"any"`
}

// SurfaceContext is the page context of a description, bounded.
type SurfaceContext struct {
	Page        *PageInfo            `json:"page,omitempty"`
	Regions     []Region             `json:"regions,omitempty"`
	Records     map[string]RecordSet `json:"records,omitempty"`
	States      map[string]any       `json:"states,omitempty"`
	Feedback    []Feedback           `json:"feedback,omitempty"`
	Unavailable []Unavailable        `json:"unavailable,omitempty"`
	Guides      []Guide              `json:"guides,omitempty"`
}

// PageInfo names the page.
type PageInfo struct {
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
}

// Region is a part of the page; a modal region hides the rest while active.
type Region struct {
	ID     string `json:"id" pling:"required"`
	Title  string `json:"title,omitempty"`
	Active bool   `json:"active"`
	Modal  bool   `json:"modal,omitempty"`
}

// RecordSet lists the rows of one record kind, bounded.
type RecordSet struct {
	Total     int          `json:"total" pling:"required,min=0"`
	Items     []RecordItem `json:"items" pling:"required"`
	Truncated bool         `json:"truncated,omitempty"`
}

// RecordItem is one row.
type RecordItem struct {
	ID        string `json:"id" pling:"required"`
	Label     string `json:"label,omitempty"`
	Offscreen bool   `json:"offscreen,omitempty"`
}

// Feedback is a message the page shows (role=alert, a toast).
type Feedback struct {
	Level   string `json:"level" pling:"required,enum=info|success|warning|error"`
	Message string `json:"message" pling:"required"`
}

// Unavailable lists a declared capability that cannot run now, and why.
type Unavailable struct {
	ID     string `json:"id" pling:"required"`
	Reason string `json:"reason,omitempty"`
	// Code is set when a registry code explains it (DUPLICATE_ACTION_ID).
	Code string `json:"code,omitempty"`
	// InputSchema is the capability's input schema, as it would be listed
	// when available (not for an entry with a code), so that an agent can
	// offer it with its real parameters before it becomes available. A
	// description over its size bound leaves it out.
	InputSchema *JSONSchema `json:"inputSchema,omitempty"`
	// Title, Description, Risk, Approval and Handoff are the capability's
	// own, as it would be listed when available (not for an entry with a
	// code), so that an agent offers it under its name with its hints
	// while it cannot run. A context over its byte bound leaves the
	// description out with the input schema.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Risk        Risk   `json:"risk,omitempty" pling:"enum=read|write|destructive"`
	Approval    bool   `json:"approval,omitempty"`
	Handoff     bool   `json:"handoff,omitempty"`
}

// Guide is an element an agent can point a person at.
type Guide struct {
	Target string `json:"target" pling:"required"`
	Label  string `json:"label,omitempty"`
}

// SurfaceInvokeResult is the invoke result: success with value, evidence and
// observation, or a business failure in Error.
type SurfaceInvokeResult struct {
	Value       any                 `json:"value,omitempty" pling:"any"`
	Evidence    *Evidence           `json:"evidence,omitempty"`
	Error       *ActionFailure      `json:"error,omitempty"`
	Observation *SurfaceObservation `json:"observation,omitempty"`
}

// ActionFailure is a business failure in result.error. Its code is one of
// the Action namespace.
type ActionFailure struct {
	Code    string         `json:"code" pling:"required,enum=@action"`
	Message string         `json:"message" pling:"required"`
	Details map[string]any `json:"details,omitempty"`
	// Resume continues a composite action from the failed step (STEP_FAILED).
	Resume string `json:"resume,omitempty"`
}

// Evidence is enough to verify the outcome, and never credentials, raw
// sensitive inputs or internal references.
type Evidence struct {
	Capability   string              `json:"capability" pling:"required"`
	Record       string              `json:"record,omitempty"`
	Records      []string            `json:"records,omitempty"`
	Expectations []ExpectationResult `json:"expectations,omitempty"`
	Steps        int                 `json:"steps,omitempty" pling:"min=0"`
	Handoff      string              `json:"handoff,omitempty"`
	Approval     string              `json:"approval,omitempty"`
	Summary      string              `json:"summary,omitempty"`
}

// ExpectationResult is one confirmed (or failed) expectation.
type ExpectationResult struct {
	State     string `json:"state" pling:"required"`
	Condition string `json:"condition" pling:"required"`
	Before    any    `json:"before,omitempty" pling:"any"`
	After     any    `json:"after,omitempty" pling:"any"`
	Met       bool   `json:"met"`
}

// SurfaceObservation is the bounded change after an invoke.
type SurfaceObservation struct {
	States              map[string]StateChange `json:"states,omitempty"`
	Feedback            []Feedback             `json:"feedback,omitempty"`
	Navigation          *Navigation            `json:"navigation,omitempty"`
	CapabilitiesChanged bool                   `json:"capabilitiesChanged"`
	Revision            string                 `json:"revision" pling:"required"`
	Truncated           bool                   `json:"truncated,omitempty"`
}

// StateChange is one state's value before and after.
type StateChange struct {
	Before any `json:"before" pling:"any"`
	After  any `json:"after" pling:"any"`
}

// Navigation records a page change during the call.
type Navigation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// SurfaceSession is a verified identity: subject, expiry, scope and
// revocation (docs/protocol.md §3.6).
type SurfaceSession struct {
	Subject     string   `json:"subject" pling:"required"`
	Audience    string   `json:"audience,omitempty"`
	Scope       []string `json:"scope" pling:"required"`
	IssuedAtMs  int64    `json:"issuedAtMs,omitempty"`
	NotBeforeMs int64    `json:"notBeforeMs,omitempty"`
	ExpiresAtMs int64    `json:"expiresAtMs" pling:"required"`
	Revoked     bool     `json:"revoked,omitempty"`
	// Agent is the agent's own name for itself, as the person who
	// consented saw it (the token's agent claim); it names who is asking
	// in an approval dialog and identifies no one.
	Agent string `json:"agent,omitempty"`
}

// Outcome classes of an audit event.
const (
	OutcomeOK            = "ok"
	OutcomeBusinessError = "business_error"
	OutcomeProtocolError = "protocol_error"
)

// SurfaceAuditEvent is the metadata of one request: never inputs, results,
// tokens or messages from page code.
type SurfaceAuditEvent struct {
	TimeMs     int64   `json:"timeMs" pling:"required"`
	RequestID  *string `json:"requestId" pling:"required,nullable"`
	Method     string  `json:"method,omitempty"`
	Capability string  `json:"capability,omitempty"`
	Outcome    string  `json:"outcome" pling:"required,enum=ok|business_error|protocol_error"`
	Code       string  `json:"code,omitempty"`
	DurationMs int64   `json:"durationMs" pling:"required,min=0"`
}

// SurfaceApprovalBinding is what an approval decision is bound to:
// immutable once built.
type SurfaceApprovalBinding struct {
	Capability string `json:"capability" pling:"required"`
	// InputDigest is "sha256:" and the lowercase hex SHA-256 of the UTF-8
	// bytes of the RFC 8785 (JCS) form of the validated input: the object
	// the handler receives (defaults applied), with "record" added for a
	// folded invoke.
	InputDigest string `json:"inputDigest" pling:"required"`
	// Session is a digest of the session token, never the token.
	Session     string `json:"session" pling:"required"`
	RequestID   string `json:"requestId" pling:"required"`
	ExpiresAtMs int64  `json:"expiresAtMs" pling:"required"`
	// Summary is the page's summary shown to the person, when the page
	// gives one: bound, so an approval of one text approves no other.
	Summary string `json:"summary,omitempty"`
}

// SurfaceApprovalChallenge is shown to a person; it carries no token.
type SurfaceApprovalChallenge struct {
	// Binding is the digest of the SurfaceApprovalBinding it asks about.
	Binding     string `json:"binding" pling:"required"`
	Capability  string `json:"capability" pling:"required"`
	Title       string `json:"title" pling:"required"`
	Risk        Risk   `json:"risk,omitempty" pling:"enum=read|write|destructive"`
	Summary     string `json:"summary,omitempty"`
	ExpiresAtMs int64  `json:"expiresAtMs" pling:"required"`
	// Record is the row a folded invoke acts on, with its label.
	Record *ApprovalRecord `json:"record,omitempty"`
	// Input is every input parameter the binding holds (the record
	// aside), in declared order, rendered for a person: redacted, escaped
	// where a character would not show faithfully, and bounded.
	Input []ApprovalField `json:"input,omitempty"`
	// More counts the parameters left out of Input by its bound; a
	// person is then not shown the whole input.
	More int `json:"more,omitempty" pling:"min=0"`
	// Agent is the asking session's agent name, rendered for a person;
	// empty when the session names none.
	Agent string `json:"agent,omitempty"`
	// Reason is the page's reason this input needs approval, rendered
	// for a person.
	Reason string `json:"reason,omitempty"`
}

// ApprovalRecord is the record of a challenge as a person sees it. Label
// is rendered as ApprovalField.Value is (escaped, redacted, bounded).
type ApprovalRecord struct {
	Kind  string `json:"kind" pling:"required"`
	ID    string `json:"id" pling:"required"`
	Label string `json:"label,omitempty"`
}

// ApprovalField is one input parameter of a challenge, rendered for a
// person once, in Go, so every host and approver shows the same text.
type ApprovalField struct {
	// Name is the parameter's name; Title what a person reads (its
	// description, else its name).
	Name  string `json:"name" pling:"required"`
	Title string `json:"title" pling:"required"`
	// Value is the text shown: a string as itself, any other value as
	// its RFC 8785 (JCS) form.
	Value string `json:"value"`
	// Redacted says a credential was replaced by [REDACTED].
	Redacted bool `json:"redacted,omitempty"`
	// Escaped says Value is written with escapes: a character that would
	// not show faithfully (a control, a bidi override, …) as \u{XXXX},
	// \n, \t or \r, and each backslash doubled.
	Escaped bool `json:"escaped,omitempty"`
	// Cut says Value was cut to the bound and ends with "…"; Length is
	// then the full text's length in characters.
	Cut    bool `json:"cut,omitempty"`
	Length int  `json:"length,omitempty" pling:"min=0"`
}

// SurfaceApprovalDecision is the approval backend's answer.
type SurfaceApprovalDecision struct {
	Binding  string `json:"binding" pling:"required"`
	Approved bool   `json:"approved"`
	// Approval is the approval an authority signed for Binding (pa1.…),
	// when the decision rests on one: the runtime hands it to the handler
	// (runtime.Call.Approval) for the site's server to check. Never on
	// the wire: a page's approve hook cannot give one.
	Approval string `json:"-"`
}
