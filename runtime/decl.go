package runtime

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/schema/pagespec"
)

// Action declares what an agent may do (docs/protocol.md §4.1). Every field is
// untrusted input: Declare validates it and refuses a bad declaration
// without changing the registry.
type Action struct {
	// ID is the action id: 1–128 chars of [A-Za-z0-9._-], starting with a
	// letter or digit. '@' and ':' are reserved for folded ids.
	ID          string
	Title       string
	Description string
	// Params are the input parameters by name.
	Params map[string]Param
	// Risk is read, write or destructive; empty means write.
	Risk schema.Risk
	// Available reports whether the action can run now; nil means always.
	// For a record action it is asked with the record id ("" in describe).
	Available func(ctx context.Context, record string) Availability
	// Run is the handler. It may be nil for an action that only hands off
	// to a person, or whose Steps do the work.
	Run Handler
	// Expect is the success condition observed after the run.
	Expect *Expectation
	// Steps make the action composite: run in order, each with its own
	// expectation; a failed step can be resumed once.
	Steps []Step
	// Handoff makes the action need a person.
	Handoff *Handoff
	// Approval requires a person's approval of each invoke.
	Approval bool
	// ApprovalFor, with Approval set, decides per invoke whether this
	// input on this record needs approval (need false: it runs without
	// one) and may give the person the reason (docs/page-api.md §2.1). A
	// check that fails asks for approval.
	ApprovalFor func(ctx context.Context, input map[string]any, record string) (need bool, reason string, err error)
	// ApprovalSummary, with Approval set, tells the person what this
	// input does in the page's words (the service, the date, the amount).
	// The text is shown and bound: it is the binding's summary, so an
	// approval of one summary approves no other. A summary that fails
	// denies the invoke.
	ApprovalSummary func(ctx context.Context, input map[string]any, record string) (string, error)
	// ParamOrder is the order the params were declared in; an approval
	// dialog lists them so (names not in it follow, sorted).
	ParamOrder []string
	// Region is the region the action belongs to.
	Region string
	// Record makes this a row action, folded into ID@Kind.
	Record *RecordRef
	// TimeoutMs is the handler's deadline (each run and step); 0 is the
	// runtime's (WithHandlerTimeout, 30 s). A handler that has not
	// finished by then is answered EXECUTION_FAILED "did not finish; its
	// effect is unknown" and the page's author is warned.
	TimeoutMs int64
	// Identity is extra data that tells two declarations apart (for
	// example the source text of the handler). Two declarations under one
	// id are the same capability when all their data, Identity included,
	// are equal; functions are not compared.
	Identity any
	// Markup is set on a declaration read from the page's markup (MarkupRef).
	Markup *MarkupRef
}

// MarkupRef says where a declaration read from the page's markup sits: it
// is the type pling.js sends (pagespec.Markup). A markup declaration never
// displaces a script declaration under the same key, a markup modal region
// hides only markup actions, and one inside user content, or a form that
// would send to another origin or window, is refused (docs/markup.md).
type MarkupRef = pagespec.Markup

// RecordRef binds an action to records of a kind. With ID set, the
// declaration is for that one row (concrete id ID:RecordID); with ID empty,
// it applies to every record of Kind. It is the type a page declares in
// JSON (pagespec.RecordRef), read by its json names exactly.
type RecordRef = pagespec.RecordRef

// Param declares one input parameter: the type a page declares in JSON
// (pagespec.Param), so a parameter has one definition on both sides.
type Param = pagespec.Param

// Availability is the answer of Action.Available.
type Availability struct {
	OK     bool
	Reason string
}

// Available is an Availability that says yes.
var Available = Availability{OK: true}

// Unavailable returns an Availability that says no, with a reason for
// people.
func Unavailable(reason string) Availability { return Availability{Reason: reason} }

// Handler runs an action (or a step) and returns its value.
type Handler func(ctx context.Context, call *Call) (any, error)

// Call is what a handler, hook or policy sees of one invoke.
type Call struct {
	// Capability is the id the agent invoked (folded: approve@order).
	Capability string
	// Action is the base action id (approve).
	Action string
	// Record is the record id of a folded invoke.
	Record string
	// Input is the validated input, record removed, defaults applied.
	Input map[string]any
	// Subject is the session's subject, or "" without a session.
	Subject string
	// RequestID is the request's id.
	RequestID string
	// Step is the 0-based index of the running step of a composite action.
	Step int
	// Session is the session token the request carried ("" without one).
	// A handler forwards it to the site's server (the Pling-Session
	// header), which verifies it itself (follow.Follower.CheckCall): the
	// page's word for who asks is no proof.
	Session string
	// Approval is the approval an authority signed for this very invoke
	// (pa1.…), when a person approved it on the authority's screen; ""
	// otherwise. A handler forwards it (the Pling-Approval header) so the
	// site's server can refuse a consequential change no person approved
	// (follow.Follower.CheckCall; docs/authority.md).
	Approval string
}

// Expectation is a declared success condition on a state, observed after
// the run and polled up to a bound because pages update asynchronously.
type Expectation struct {
	State string
	// Change is "increase", "decrease" or "any" (the value differs).
	Change string
	// Equals, when HasEquals, is the value the state must have after.
	Equals    any
	HasEquals bool
	// Predicate, when set, decides from the values before and after.
	Predicate func(before, after any) bool
	// TimeoutMs bounds the wait; 0 takes the runtime's default.
	TimeoutMs int64
}

// Step is one step of a composite action.
type Step struct {
	Title  string
	Run    Handler
	Expect *Expectation
}

// Handoff hands the action to a person and waits for them.
type Handoff struct {
	Prompt string
	// TimeoutMs bounds the wait; 0 takes the runtime's default.
	TimeoutMs int64
	// Result, when set, is the action's value, read once the person is
	// done and the expectation is observed: what the person entered or
	// made (the order number, the code they confirmed), not what the
	// handler returned before they acted. Without it the value is the
	// handler's. A failure of Result is the handler's kind of failure
	// (EXECUTION_FAILED, or the Action code it gives).
	Result Handler `json:"-"`
}

// State declares a named value the page can read.
type State struct {
	Key         string
	Description string
	// Read returns the value; it must be JSON-encodable.
	Read     func(ctx context.Context) (any, error)
	Identity any
	Markup   *MarkupRef
}

// Guide declares an element an agent can point a person at.
type Guide struct {
	Target   string
	Label    string
	Selector string
	Identity any
	Markup   *MarkupRef
}

// Region declares a part of the page. A modal region, while active, hides
// every action outside it.
type Region struct {
	ID    string
	Title string
	Modal bool
	// Active reports whether the region is shown; nil means active.
	Active   func(ctx context.Context) bool
	Identity any
	Markup   *MarkupRef
}

// Records declares the rows of a list.
type Records struct {
	Kind string
	// Read returns the rows; it is asked on every describe and invoke.
	Read     func(ctx context.Context) ([]RecordItem, error)
	Identity any
}

// RecordItem is one row: offscreen rows are not rendered (a virtualized
// list) but exist.
type RecordItem struct {
	ID        string
	Label     string
	Offscreen bool
}

// DeclarationError refuses a bad declaration; the registry is unchanged.
type DeclarationError struct {
	Kind   string // action, state, guide, region, records, hook
	Key    string // the id, key, target or kind (cut to 64 bytes)
	Field  string
	Reason string
}

func (e *DeclarationError) Error() string {
	return fmt.Sprintf("pling: invalid %s %q: %s: %s", e.Kind, e.Key, e.Field, e.Reason)
}

// Declaration limits: every declaration is untrusted input.
const (
	maxTitleLen       = 200
	maxDescriptionLen = 2000
	maxParams         = 64
	maxParamDepth     = 8
	maxEnum           = 256
	maxPatternLen     = 512
	maxSteps          = 32
	maxPromptLen      = 1000
	maxLabelLen       = 200
)

// The declaration name syntaxes, written out rather than as regular
// expressions: compiling three at start-up and running one per declared
// name was a visible share of a page's first describe in wasm.
var (
	idRe       = nameSyntax{first: byteSet(alnum), rest: byteSet(alnum + "._-"), max: 128}             // ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$
	recordIDRe = nameSyntax{first: byteSet(alnum + "._~:-"), rest: byteSet(alnum + "._~:-"), max: 128} // ^[A-Za-z0-9._~:-]{1,128}$
	paramRe    = nameSyntax{first: byteSet(letters + "_"), rest: byteSet(alnum + "_.-"), max: 64}      // ^[A-Za-z_][A-Za-z0-9_.-]{0,63}$
)

const (
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	alnum   = letters + "0123456789"
)

// nameSyntax is a name of 1–max bytes: one byte of first, then bytes of
// rest.
type nameSyntax struct {
	first, rest *[256]bool
	max         int
}

func byteSet(chars string) *[256]bool {
	var set [256]bool
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return &set
}

// MatchString reports whether s is such a name.
func (n nameSyntax) MatchString(s string) bool {
	if len(s) == 0 || len(s) > n.max || !n.first[s[0]] {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !n.rest[s[i]] {
			return false
		}
	}
	return true
}

func declErr(kind, key, field, reason string) *DeclarationError {
	if len(key) > 64 {
		key = key[:64]
	}
	return &DeclarationError{Kind: kind, Key: key, Field: field, Reason: reason}
}

func checkText(kind, key, field, s string, max int, required bool) error {
	switch {
	case required && s == "":
		return declErr(kind, key, field, "is required")
	case !utf8.ValidString(s):
		return declErr(kind, key, field, "is not UTF-8")
	case utf8.RuneCountInString(s) > max:
		return declErr(kind, key, field, fmt.Sprintf("is longer than %d characters", max))
	}
	return nil
}

var paramTypes = map[string]bool{"": true, "string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true}

func validateAction(a *Action) error {
	const k = "action"
	if !idRe.MatchString(a.ID) {
		return declErr(k, a.ID, "id", "must be 1–128 chars of A-Z a-z 0-9 . _ - starting with a letter or digit")
	}
	// Only the id is required (page-api §2.1, spec §4.1): a missing title
	// is the id (set by DeclareAction after validation).
	if err := checkText(k, a.ID, "title", a.Title, maxTitleLen, false); err != nil {
		return err
	}
	if err := checkText(k, a.ID, "description", a.Description, maxDescriptionLen, false); err != nil {
		return err
	}
	switch a.Risk {
	case "", schema.RiskRead, schema.RiskWrite, schema.RiskDestructive:
	default:
		return declErr(k, a.ID, "risk", "must be read, write or destructive")
	}
	if len(a.Params) > maxParams {
		return declErr(k, a.ID, "params", fmt.Sprintf("has more than %d parameters", maxParams))
	}
	for name, p := range a.Params {
		if !paramRe.MatchString(name) {
			return declErr(k, a.ID, "params", "parameter names must be 1–64 chars of A-Z a-z 0-9 _ . - starting with a letter or _")
		}
		if a.Record != nil && name == "record" {
			return declErr(k, a.ID, "params.record", "is reserved for the record of a row action")
		}
		if err := validateParam(a.ID, "params."+name, &p, 0); err != nil {
			return err
		}
	}
	if a.Expect != nil {
		if err := validateExpect(a.ID, "expect", a.Expect); err != nil {
			return err
		}
	}
	if len(a.Steps) > maxSteps {
		return declErr(k, a.ID, "steps", fmt.Sprintf("has more than %d steps", maxSteps))
	}
	for i, s := range a.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		if err := checkText(k, a.ID, f+".title", s.Title, maxTitleLen, false); err != nil {
			return err
		}
		if s.Expect != nil {
			if err := validateExpect(a.ID, f+".expect", s.Expect); err != nil {
				return err
			}
		}
	}
	if a.Handoff != nil {
		if err := checkText(k, a.ID, "handoff.prompt", a.Handoff.Prompt, maxPromptLen, true); err != nil {
			return err
		}
		if a.Handoff.TimeoutMs < 0 {
			return declErr(k, a.ID, "handoff.timeoutMs", "must not be negative")
		}
	}
	if a.Region != "" && !idRe.MatchString(a.Region) {
		return declErr(k, a.ID, "region", "is not a valid region id")
	}
	if a.Record != nil {
		if !idRe.MatchString(a.Record.Kind) {
			return declErr(k, a.ID, "record.kind", "is not a valid record kind")
		}
		if a.Record.ID != "" && !recordIDRe.MatchString(a.Record.ID) {
			return declErr(k, a.ID, "record.id", "must be 1–128 chars of A-Z a-z 0-9 . _ ~ : -")
		}
	}
	if _, err := shapeDigest(a.Identity); err != nil {
		return declErr(k, a.ID, "identity", "is not JSON-encodable")
	}
	return nil
}

func validateExpect(id, field string, e *Expectation) error {
	if !validKey(e.State) {
		return declErr("action", id, field+".state", "is not a valid state key")
	}
	switch e.Change {
	case "", "increase", "decrease", "any":
	default:
		return declErr("action", id, field+".change", "must be increase, decrease or any")
	}
	if e.Change == "" && !e.HasEquals && e.Predicate == nil {
		return declErr("action", id, field, "needs change, equals or a predicate")
	}
	if e.TimeoutMs < 0 {
		return declErr("action", id, field+".timeoutMs", "must not be negative")
	}
	return nil
}

func validateParam(id, field string, p *Param, depth int) error {
	const k = "action"
	if depth > maxParamDepth {
		return declErr(k, id, field, "nests too deep")
	}
	if !paramTypes[p.Type] {
		return declErr(k, id, field+".type", fmt.Sprintf("is %q; it must be string (for text), number, integer, boolean, object or array", cutBytes(p.Type, 32)))
	}
	if err := checkText(k, id, field+".description", p.Description, maxDescriptionLen, false); err != nil {
		return err
	}
	if len(p.Enum) > maxEnum {
		return declErr(k, id, field+".enum", fmt.Sprintf("has more than %d values", maxEnum))
	}
	if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
		return declErr(k, id, field, "minimum is greater than maximum")
	}
	for _, n := range []*int{p.MinLength, p.MaxLength, p.MinItems, p.MaxItems} {
		if n != nil && *n < 0 {
			return declErr(k, id, field, "length bounds must not be negative")
		}
	}
	if p.MinLength != nil && p.MaxLength != nil && *p.MinLength > *p.MaxLength {
		return declErr(k, id, field, "minLength is greater than maxLength")
	}
	if p.MinItems != nil && p.MaxItems != nil && *p.MinItems > *p.MaxItems {
		return declErr(k, id, field, "minItems is greater than maxItems")
	}
	if p.Pattern != "" {
		if len(p.Pattern) > maxPatternLen {
			return declErr(k, id, field+".pattern", "is too long")
		}
		if _, err := compilePattern(p.Pattern); err != nil {
			return declErr(k, id, field+".pattern", "is not a pattern Pling accepts (ECMAScript with the u flag): "+err.Error())
		}
	}
	if p.Items != nil {
		if p.Type != "array" {
			return declErr(k, id, field+".items", "is only for arrays")
		}
		if err := validateParam(id, field+".items", p.Items, depth+1); err != nil {
			return err
		}
	}
	if _, err := shapeDigest(p.Enum); err != nil {
		return declErr(k, id, field+".enum", "is not JSON-encodable")
	}
	if _, err := shapeDigest(p.Default); err != nil {
		return declErr(k, id, field+".default", "is not JSON-encodable")
	}
	return nil
}

// validKey is the syntax of state keys, guide targets and region ids.
func validKey(s string) bool { return idRe.MatchString(s) }

func validateState(s *State) error {
	return keyedCheck{kind: "state", keyField: "key", key: s.Key, missing: absent(s.Read == nil, "read"),
		texts:    []textCheck{{"description", s.Description, maxDescriptionLen}},
		identity: s.Identity, checkIdentity: true}.validate()
}

func validateGuide(g *Guide) error {
	return keyedCheck{kind: "guide", keyField: "target", key: g.Target,
		texts:    []textCheck{{"label", g.Label, maxLabelLen}, {"selector", g.Selector, maxDescriptionLen}},
		identity: g.Identity, checkIdentity: true}.validate()
}

func validateRegion(r *Region) error {
	return keyedCheck{kind: "region", keyField: "id", key: r.ID,
		texts:    []textCheck{{"title", r.Title, maxTitleLen}},
		identity: r.Identity, checkIdentity: true}.validate()
}

func validateRecords(r *Records) error {
	return keyedCheck{kind: "records", keyField: "kind", key: r.Kind, missing: absent(r.Read == nil, "read")}.validate()
}

// keyedCheck is what a keyed declaration (state, guide, region, records)
// is checked for, in this order: its key's syntax, a required field
// present, its texts within their bounds, its identity JSON-encodable.
type keyedCheck struct {
	kind, keyField, key string
	missing             string // the required field that is absent, or ""
	texts               []textCheck
	identity            any
	checkIdentity       bool
}

// textCheck is one optional text of a declaration and its bound.
type textCheck struct {
	field, value string
	max          int
}

// absent is field when missing, else "".
func absent(missing bool, field string) string {
	if missing {
		return field
	}
	return ""
}

func (c keyedCheck) validate() error {
	if !validKey(c.key) {
		return declErr(c.kind, c.key, c.keyField, "must be 1–128 chars of A-Z a-z 0-9 . _ - starting with a letter or digit")
	}
	if c.missing != "" {
		return declErr(c.kind, c.key, c.missing, "is required")
	}
	for _, t := range c.texts {
		if err := checkText(c.kind, c.key, t.field, t.value, t.max, false); err != nil {
			return err
		}
	}
	if c.checkIdentity {
		if _, err := shapeDigest(c.identity); err != nil {
			return declErr(c.kind, c.key, "identity", "is not JSON-encodable")
		}
	}
	return nil
}
