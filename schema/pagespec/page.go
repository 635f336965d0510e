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
	// ApprovalTTLMs bounds an approval's wait for a person.
	ApprovalTTLMs int64 `json:"approvalTtlMs,omitempty"`
	// ReplayGuard is "" or "memory".
	ReplayGuard string `json:"replayGuard,omitempty"`
	// Authority is the URL of the delegation authority the page follows:
	// its keys verify sessions, its revocation feed revokes them, and its
	// shared replay guard records a delegated session's write and
	// destructive request ids (docs/authority.md).
	Authority string `json:"authority,omitempty"`
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
}

// Guide is the data of pling.guide().
type Guide struct {
	Target   string `json:"target"`
	Label    string `json:"label,omitempty"`
	Selector string `json:"selector,omitempty"`
	Identity any    `json:"identity,omitempty"`
}

// Region is the data of pling.region().
type Region struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Modal    bool   `json:"modal,omitempty"`
	Identity any    `json:"identity,omitempty"`
}

// Records is the data of pling.records().
type Records struct {
	Kind string `json:"kind"`
}
