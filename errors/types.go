// Package errors holds Pling's error registries: one closed, typed code set
// per namespace (Surface protocol, Action, Delegation, Continuity authority,
// Gateway), each code with its metadata, plus the error value type that
// carries a code through Go code and the redaction applied to details before
// anything is logged or returned.
//
// The package shadows the standard library's name on purpose: it is the
// registry of errors for this project (docs/protocol.md §2). Importers usually name it
// perr:
//
//	import perr "github.com/pling-go/pling/errors"
//
// Codes are for programs, messages are for people: nothing may branch on a
// message, which may be localized (docs/protocol.md §5).
package errors

import (
	"fmt"
)

// Namespace is one error contract. A code belongs to exactly one namespace
// and never moves between them (docs/protocol.md §5, §6).
type Namespace uint8

// The namespaces, in the order of docs/protocol.md §5.
const (
	// Surface is the protocol namespace: failures carried as ok:false.
	Surface Namespace = iota + 1
	// Action is the business namespace: failures carried in result.error
	// of an ok:true response.
	Action
	// Delegation is the optional delegation service (issues and revokes
	// session tokens); a frozen code → HTTP status map.
	Delegation
	// Continuity is the continuity authority (tasks, revisions, leases),
	// mapped to HTTP by continuity-http.
	Continuity
	// Gateway is the OpenAI-compatible gateway; its errors render as an
	// OpenAI-compatible error body.
	Gateway
)

// Namespaces lists every namespace in registry order.
func Namespaces() []Namespace {
	return []Namespace{Surface, Action, Delegation, Continuity, Gateway}
}

// String returns the namespace's stable lower-case name.
func (n Namespace) String() string {
	switch n {
	case Surface:
		return "surface"
	case Action:
		return "action"
	case Delegation:
		return "delegation"
	case Continuity:
		return "continuity"
	case Gateway:
		return "gateway"
	}
	return fmt.Sprintf("namespace(%d)", uint8(n))
}

// Code is a stable machine-readable error code such as "RATE_LIMITED".
//
// A Code read from the wire may be one this build does not know: decoding is
// lenient and keeps it (see ParseCode), so a newer peer's code survives a
// round trip through an older reader.
type Code string

// String returns the code text.
func (c Code) String() string { return string(c) }

// MarshalText writes the canonical code. A historical alias never leaves
// this package: it is written as the code it stands for.
func (c Code) MarshalText() ([]byte, error) {
	return []byte(Canonical(c)), nil
}

// UnmarshalText reads a code, resolving historical aliases to their canonical
// code. Unknown codes are kept as they are, not rejected.
func (c *Code) UnmarshalText(b []byte) error {
	*c, _ = ParseCode(string(b))
	return nil
}

// Known reports whether c is a canonical or reserved code of the registry.
func (c Code) Known() bool {
	_, ok := defaultRegistry().entries[c]
	return ok
}

// Namespace returns the namespace of a known code, and false for an unknown
// one.
func (c Code) Namespace() (Namespace, bool) {
	e, ok := defaultRegistry().entries[c]
	if !ok {
		return 0, false
	}
	return e.Namespace, true
}

// ParseCode reads code text. A historical alias resolves to its canonical
// code; known reports whether the result is in the registry. An unknown code
// is returned unchanged with known false, so callers can keep and forward it.
func ParseCode(s string) (c Code, known bool) {
	return defaultRegistry().parse(s)
}

// Canonical returns the code that is written for c: an alias becomes its
// canonical code and a reserved code its canonical parent (reserved codes are
// documented before they ship and are never produced until then). Unknown
// codes are returned unchanged.
func Canonical(c Code) Code {
	return defaultRegistry().canonical(c)
}

// Executed says whether a request that failed with a protocol code entered
// business execution (docs/protocol.md §5.1, "executed").
type Executed uint8

const (
	// ExecutedNotApplicable is the value for non-protocol namespaces.
	ExecutedNotApplicable Executed = iota
	// ExecutedNo: the request did not enter business execution.
	ExecutedNo
	// ExecutedUnconfirmed: the failure may have happened at the execution
	// boundary; nothing can be inferred about business success.
	ExecutedUnconfirmed
)

// String returns "no", "unconfirmed" or "" (not applicable).
func (e Executed) String() string {
	switch e {
	case ExecutedNo:
		return "no"
	case ExecutedUnconfirmed:
		return "unconfirmed"
	}
	return ""
}

// Recovery is the machine-readable recovery hint of a code: what a client
// does next (docs/protocol.md §5.7). The agent-side client switches on
// it; the human text is Entry.Action.
type Recovery uint8

// Recovery hints. Each names the client's next move.
const (
	// RecoverNone: nothing to recover; reserved for unknown codes.
	RecoverNone Recovery = iota
	// RecoverFixRequest: fix the envelope or arguments; never retry
	// unchanged.
	RecoverFixRequest
	// RecoverFixParams: correct the values against the schema.
	RecoverFixParams
	// RecoverDescribe: the page or exposure changed; describe again and do
	// not guess a similar id.
	RecoverDescribe
	// RecoverSatisfyPreconditions: satisfy the preconditions; never bypass
	// the gate.
	RecoverSatisfyPreconditions
	// RecoverStop: stop and involve a person; an agent cannot
	// self-authorize.
	RecoverStop
	// RecoverObserve: observe the business state first; a partial success
	// may exist. Never resend a write blindly.
	RecoverObserve
	// RecoverWait: wait as the response says (retryAfterMs), then retry.
	RecoverWait
	// RecoverRetryLater: a transient failure of infrastructure; retry the
	// same request later with back-off.
	RecoverRetryLater
	// RecoverCheckPrevious: the id was consumed; check the earlier result
	// and do not mint a new id for the same intent.
	RecoverCheckPrevious
	// RecoverReauthenticate: obtain a new session or delegation.
	RecoverReauthenticate
	// RecoverResume: continue the composite action with its resume token.
	RecoverResume
	// RecoverFixDeclaration: the page declares something twice; the page's
	// author must fix it. For an agent this is like ACTION_UNAVAILABLE.
	RecoverFixDeclaration
	// RecoverUpgrade: speak a supported protocol version or method.
	RecoverUpgrade
)

var recoveryNames = [...]string{
	RecoverNone:                 "none",
	RecoverFixRequest:           "fix-request",
	RecoverFixParams:            "fix-params",
	RecoverDescribe:             "describe",
	RecoverSatisfyPreconditions: "satisfy-preconditions",
	RecoverStop:                 "stop",
	RecoverObserve:              "observe",
	RecoverWait:                 "wait",
	RecoverRetryLater:           "retry-later",
	RecoverCheckPrevious:        "check-previous",
	RecoverReauthenticate:       "reauthenticate",
	RecoverResume:               "resume",
	RecoverFixDeclaration:       "fix-declaration",
	RecoverUpgrade:              "upgrade",
}

// String returns the hint's stable kebab-case name.
func (r Recovery) String() string {
	if int(r) < len(recoveryNames) {
		return recoveryNames[r]
	}
	return fmt.Sprintf("recovery(%d)", uint8(r))
}

// Text is a message in the languages Pling ships: English (the default) and
// Simplified Chinese.
type Text struct {
	En string
	Zh string
}

// In returns the text for a BCP 47 language tag; anything that is not
// Chinese gets English.
func (t Text) In(lang string) string {
	if isChinese(lang) && t.Zh != "" {
		return t.Zh
	}
	return t.En
}

func isChinese(lang string) bool {
	return len(lang) >= 2 && (lang[0] == 'z' || lang[0] == 'Z') && (lang[1] == 'h' || lang[1] == 'H') &&
		(len(lang) == 2 || lang[2] == '-' || lang[2] == '_')
}

// Entry is one code's metadata.
type Entry struct {
	Code      Code
	Namespace Namespace
	// Message is the default message, for people.
	Message Text
	// Action is the recovery hint, for people (i18n key ActionKey).
	Action Text
	// Recovery is the recovery hint, for programs.
	Recovery Recovery
	// Retriable reports whether the same request may succeed if sent again
	// unchanged (after waiting where the response says so).
	Retriable bool
	// Executed is set for Surface protocol codes only.
	Executed Executed
	// HTTPStatus is the status of the namespace's HTTP mapping, or 0 where
	// the namespace has none (Action codes ride inside an ok:true response).
	HTTPStatus int
	// Parent is set for a reserved code: the canonical code produced until
	// this one ships.
	Parent Code
}

// Reserved reports whether the entry is a documented code that is not
// produced yet; Parent is produced in its place.
func (e Entry) Reserved() bool { return e.Parent != "" }

// MessageKey is the i18n key of the message: errors.<CODE>.
func (e Entry) MessageKey() string { return "errors." + string(e.Code) }

// ActionKey is the i18n key of the recovery hint: errors.<CODE>.action.
func (e Entry) ActionKey() string { return "errors." + string(e.Code) + ".action" }

// Lookup returns the metadata of a canonical or reserved code. An alias is
// resolved first.
func Lookup(c Code) (Entry, bool) {
	c, _ = defaultRegistry().parse(string(c))
	e, ok := defaultRegistry().entries[c]
	return e, ok
}

// Codes returns the codes of a namespace, reserved ones included, in registry
// order.
func Codes(ns Namespace) []Code {
	var out []Code
	for _, c := range defaultRegistry().order {
		if defaultRegistry().entries[c].Namespace == ns {
			out = append(out, c)
		}
	}
	return out
}

// Aliases returns the historical aliases as alias → canonical code. They are
// read, never written.
func Aliases() map[string]Code {
	out := make(map[string]Code, len(defaultRegistry().aliases))
	for k, v := range defaultRegistry().aliases {
		out[k] = v
	}
	return out
}
