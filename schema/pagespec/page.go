// Package pagespec holds what a page sends the module as JSON text: the data
// members of its configuration (pling.configure and the script tag's
// data-* attributes) and of its state, guide, region and records
// declarations. The decoders are
// generated from these types' json tags (decode_gen.go) by
// schema/internal/gen, which also writes them into pling.d.ts, so a member
// is read by the name the TypeScript declares and by no other spelling.
package pagespec

// Config is the data of a page's configuration.
type Config struct {
	// Expose lists the capability ids agents may see; "*" is every one.
	Expose []string `json:"expose,omitempty"`
	// Anonymous lists what a caller without a session may see when
	// sessions are configured; absent is the runtime's default.
	Anonymous *[]string `json:"anonymous,omitempty"`
	// Origin is the page's origin, checked against a token's audience.
	Origin string `json:"origin,omitempty"`
	// RequireSession refuses callers without a session.
	RequireSession bool `json:"requireSession,omitempty"`
	// Keys maps a key id to a base64url Ed25519 public key.
	Keys map[string]string `json:"keys,omitempty"`
	// RateLimit sets the token buckets of describe and invoke.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// Loop sets loop detection.
	Loop *Loop `json:"loop,omitempty"`
	// ExpectTimeoutMs bounds an expectation's wait.
	ExpectTimeoutMs int64 `json:"expectTimeoutMs,omitempty"`
	// HandoffTimeoutMs bounds a handoff's wait for a person.
	HandoffTimeoutMs int64 `json:"handoffTimeoutMs,omitempty"`
	// HandlerTimeoutMs is the default deadline of an action's handler
	// (30 s); an action's timeoutMs overrides it.
	HandlerTimeoutMs int64 `json:"handlerTimeoutMs,omitempty"`
	// ApprovalTTLMs bounds an approval's wait for a person.
	ApprovalTTLMs int64 `json:"approvalTtlMs,omitempty"`
	// ReplayGuard is "" or "memory".
	ReplayGuard string `json:"replayGuard,omitempty"`
	// Authority is the URL of the delegation authority the page follows:
	// its keys verify sessions, its revocation feed revokes them, and its
	// shared replay guard records a delegated session's write and
	// destructive request ids (docs/authority.md).
	Authority string `json:"authority,omitempty"`
	// Approvals is where a person approves: "" or "page" (the in-page
	// dialog or the page's approve hook) or "authority" (the page sends
	// the challenge to its authority, a person approves on the site's
	// screen, and the page accepts only the approval the authority
	// signed for that binding; needs authority).
	Approvals string `json:"approvals,omitempty"`
	// Subject is the person signed in on the site (its user id, as the
	// authority's operator names them in a token's sub): a session for
	// anyone else is refused with SESSION_INVALID, and every session when
	// it is "" (nobody signed in). Absent: not checked.
	Subject *string `json:"subject,omitempty"`
}

// RateLimit is the budget of describe and of invoke, per session.
type RateLimit struct {
	Describe Bucket `json:"describe,omitempty"`
	Invoke   Bucket `json:"invoke,omitempty"`
}

// Bucket is one token bucket; a burst of 0 turns it off.
type Bucket struct {
	Burst     int     `json:"burst,omitempty"`
	PerSecond float64 `json:"perSecond,omitempty"`
}

// Loop is loop detection: after Repeats executions of the same call with
// no state change between them, within WindowMs, the next is refused;
// 0 repeats turns it off.
type Loop struct {
	Repeats  int   `json:"repeats,omitempty"`
	WindowMs int64 `json:"windowMs,omitempty"`
}

// State is the data of pling.state().
type State struct {
	Key         string `json:"key"`
	Description string `json:"description,omitempty"`
	// Identity tells two declarations under one key apart (the reader's
	// source, by default).
	Identity any `json:"identity,omitempty"`
	// Markup is set by pling.js on what it read from the page's markup.
	Markup *Markup `json:"markup,omitempty"`
}

// Guide is the data of pling.guide().
type Guide struct {
	Target   string  `json:"target"`
	Label    string  `json:"label,omitempty"`
	Selector string  `json:"selector,omitempty"`
	Identity any     `json:"identity,omitempty"`
	Markup   *Markup `json:"markup,omitempty"`
}

// Region is the data of pling.region().
type Region struct {
	ID       string  `json:"id"`
	Title    string  `json:"title,omitempty"`
	Modal    bool    `json:"modal,omitempty"`
	Identity any     `json:"identity,omitempty"`
	Markup   *Markup `json:"markup,omitempty"`
}

// Records is the data of pling.records().
type Records struct {
	Kind string `json:"kind"`
}

// Row is one record a records reader returns.
type Row struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	// Visible is false for a record out of view; absent is visible.
	Visible *bool `json:"visible,omitempty"`
}

// Action is the data of pling.action(); its functions (run, available,
// the expectation's predicate, the steps' runs and predicates) travel
// apart.
type Action struct {
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Params are the input parameters by name.
	Params map[string]Param `json:"params,omitempty"`
	// Risk is read, write or destructive; absent means write.
	Risk string `json:"risk,omitempty"`
	// Expect is the success condition observed after the run.
	Expect *Expect `json:"expect,omitempty"`
	// Steps make the action composite.
	Steps []Step `json:"steps,omitempty"`
	// Handoff makes the action need a person.
	Handoff *Handoff `json:"handoff,omitempty"`
	// Approval requires a person's approval of each invoke.
	Approval bool `json:"approval,omitempty"`
	// Region is the region the action belongs to.
	Region string `json:"region,omitempty"`
	// Record makes this a row action, folded into id@kind.
	Record *RecordRef `json:"record,omitempty"`
	// TimeoutMs is the handler's deadline; absent or 0 is the page's
	// handlerTimeoutMs (30 s by default).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// Identity tells two declarations under one id apart (the handler's
	// source, by default).
	Identity any `json:"identity,omitempty"`
	// Markup is set by pling.js on what it read from the page's markup.
	Markup *Markup `json:"markup,omitempty"`
}

// Param declares one input parameter.
type Param struct {
	// Type is string, number, integer, boolean, object or array; empty
	// accepts any JSON value.
	Type        string   `json:"type,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []any    `json:"enum,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Items       *Param   `json:"items,omitempty"`
	MinItems    *int     `json:"minItems,omitempty"`
	MaxItems    *int     `json:"maxItems,omitempty"`
	Default     any      `json:"default,omitempty"`
}

// Expect is an expectation: the state that must change, and how.
type Expect struct {
	State string `json:"state,omitempty"`
	// Change is "increase", "decrease", "any" or "change" (the same as
	// "any").
	Change string `json:"change,omitempty"`
	// Equals is the value the state must have after; null is a value
	// here ("equals null"), and an absent equals sets no value.
	Equals    RawJSON `json:"equals,omitempty"`
	TimeoutMs int64   `json:"timeoutMs,omitempty"`
}

// Step is one step of a composite action.
type Step struct {
	Title  string  `json:"title,omitempty"`
	Expect *Expect `json:"expect,omitempty"`
}

// Handoff hands the action over to a person.
type Handoff struct {
	Prompt    string `json:"prompt,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// Markup says where a declaration pling.js read from the page's markup
// sits (docs/markup.md §"User content"). A declaration with it is the
// page's markup, not its script: it never displaces, hides or joins a
// declaration the site's script made under the same key.
type Markup struct {
	// Path is a short selector path to the element, for the page's author.
	Path string `json:"path,omitempty"`
	// UserContent: the element sits inside [data-pling-user-content]; the
	// declaration is refused.
	UserContent bool `json:"userContent,omitempty"`
	// SubmitTo is the absolute URL a form sends its fields to (its
	// action, or the form action of the button that submits it), and
	// SubmitTarget the browsing context it names; a form whose submission
	// leaves the page's origin or its window is refused.
	SubmitTo     string `json:"submitTo,omitempty"`
	SubmitTarget string `json:"submitTarget,omitempty"`
}

// RecordRef binds an action to records of a kind. With ID set, the
// declaration is for that one row (concrete id id:recordId); with ID
// empty, it applies to every record of Kind.
type RecordRef struct {
	Kind           string `json:"kind"`
	ID             string `json:"id,omitempty"`
	AllowOffscreen bool   `json:"allowOffscreen,omitempty"`
}

// RawJSON is a member of any JSON value that is kept as the parser read
// it (objects as map[string]any, arrays as []any, numbers as
// json.Number with their text) and whose presence is kept too: Set is
// false when the member is absent and true when it is there, null
// included (Value nil). Other members read a null as absent.
type RawJSON struct {
	Set   bool
	Value any
}
