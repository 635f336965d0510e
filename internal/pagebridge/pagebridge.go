// Package pagebridge is what the page bridge (the wasm module) and the
// author tools (pling check, pling describe) need from a runtime beyond
// its public API: refusing request text a host would not hand over,
// whether the site allowlist exposes an action, the author's lint and the
// markup declarations' places, and the failures and availability a page's
// own code reports. A user of the runtime in Go never needs them, so they
// are not part of package runtime's API (docs/style.md "A small public API").
//
// Package runtime registers its unexported functions here from its init
// (as it does in internal/modeltool): this package cannot name
// *runtime.Runtime, runtime.Action, runtime.Availability or
// runtime.Option (runtime imports it), so it keeps them as any and the
// generic callers below assert them back.
package pagebridge

import "context"

// MarkupPlace is one declaration read from the page's markup and where it
// sits, for the page's author (pling check, pling describe): never for
// an agent.
type MarkupPlace struct {
	// Kind is action, state, guide or region.
	Kind string `json:"kind"`
	// Key is the action's id (a row action's folded id, ACTION@KIND), the
	// state's key, the guide's target or the region's id.
	Key string `json:"key"`
	// Path is the short selector path pling.js reported (MarkupRef.Path).
	Path string `json:"path,omitempty"`
	// Status is PlaceDeclared, PlaceSetAside, PlaceConflict or PlaceRefused.
	Status string `json:"status"`
	// UserContent: it sits inside the site's data-pling-user-content mark.
	UserContent bool `json:"userContent,omitempty"`
	// Suspect says why its place looks like content the site's users
	// wrote although the site marked none there, or is empty.
	Suspect string `json:"suspect,omitempty"`
}

// The statuses of a MarkupPlace.
const (
	// PlaceDeclared: the declaration counts.
	PlaceDeclared = "declared"
	// PlaceSetAside: the site's script declares under the same key, so
	// this markup declaration is ignored.
	PlaceSetAside = "set aside"
	// PlaceConflict: another, different declaration holds the key, so
	// neither is available.
	PlaceConflict = "conflict"
	// PlaceRefused: refused when declared (inside user content, or a form
	// that would send elsewhere).
	PlaceRefused = "refused"
)

// KeyWord names what identifies a declaration of the kind (a
// MarkupPlace's Kind), for the messages that name its Key: a state's key,
// a guide's target, an action's or a region's id.
func KeyWord(kind string) string {
	switch kind {
	case "state":
		return "key"
	case "guide":
		return "target"
	}
	return "id"
}

// FormField is one control of a markup form that the browser's
// constraint validation found invalid: its param's name and the
// validation message the page shows a person (the page's own, set with
// setCustomValidity, or the browser's).
type FormField struct {
	Name    string
	Message string
}

// Funcs are the runtime's functions this package calls, registered by
// package runtime (R is *runtime.Runtime, A runtime.Action, V
// runtime.Availability, O runtime.Option).
type Funcs[R, A, V, O any] struct {
	Refuse        func(R, string) []byte
	SiteExposes   func(R, A) bool
	Lint          func(R, context.Context) []string
	MarkupPlaces  func(R) []MarkupPlace
	CheckFailed   func(error) V
	AuthorWarning func(func(message string)) O
	Unexposed     O
	PageFailure   func(code, message string, details map[string]any) (warning string, err error)
	FormRefused   func([]FormField) error
}

var (
	refuse, siteExposes, lint, places, checkFailed, authorWarning, unexposed any
	pageFailure                                                              func(code, message string, details map[string]any) (string, error)
	formRefused                                                              func([]FormField) error
)

// Register is called once, by package runtime, from its init.
func Register[R, A, V, O any](f Funcs[R, A, V, O]) {
	refuse, siteExposes, lint, places = f.Refuse, f.SiteExposes, f.Lint, f.MarkupPlaces
	checkFailed, authorWarning, unexposed = f.CheckFailed, f.AuthorWarning, f.Unexposed
	pageFailure, formRefused = f.PageFailure, f.FormRefused
}

// Refuse answers request text that a host refused without handing it
// over: wire.ReasonTooLarge for text its length alone shows to be longer
// than schema.MaxRequestBytes (a JS string of more UTF-16 code units than
// that has more UTF-8 bytes too), wire.ReasonInvalidUTF8 for text with
// no UTF-8 form (a JS string with a lone surrogate). The response and the
// audit record are those the runtime's Handle gives such text at step 1
// of §3.3.
func Refuse[R any](rt R, reason string) []byte {
	return refuse.(func(R, string) []byte)(rt, reason)
}

// SiteExposes reports whether rt's site allowlist lets any caller reach
// the capability an action declares (its id, or id@kind for a row
// action). A session's scope may narrow that further; it can never widen
// it.
func SiteExposes[R, A any](rt R, a A) bool {
	return siteExposes.(func(R, A) bool)(rt, a)
}

// Lint lists, for the page's author, the mistakes in what rt has declared
// now that no single declaration shows (docs/page-api.md §2.10). It asks
// the page's availability checks, so the page bridge runs it on
// development origins and for pling check only.
func Lint[R any](rt R, ctx context.Context) []string {
	return lint.(func(R, context.Context) []string)(rt, ctx)
}

// MarkupPlaces lists the declarations read from the page's markup, those
// refused when declared included, with where each sits and whether its
// place looks like the site's users wrote it.
func MarkupPlaces[R any](rt R) []MarkupPlace {
	return places.(func(R) []MarkupPlace)(rt)
}

// CheckFailed is the availability (V, runtime.Availability) of an action
// whose check failed (threw, rejected): unavailable, with the page's text
// of err in the reason. Lint reports it to the page's author.
func CheckFailed[V any](err error) V {
	return checkFailed.(func(error) V)(err)
}

// WithAuthorWarning is the runtime option (O, runtime.Option) that sets
// where the runtime tells the page's author about a mistake it sees while
// running (a handler that missed its deadline); the page bridge writes
// them to the console.
func WithAuthorWarning[O any](f func(message string)) O {
	return authorWarning.(func(func(string)) O)(f)
}

// WithUnexposedFeedback is the runtime option (O, runtime.Option) that
// makes describe say, in its context's feedback, which declared actions
// the site allowlist exposes to no caller (their number and the patterns,
// never their ids): the page bridge and pling describe turn it on, so a
// page's author learns of a forgotten data-expose from the first
// describe; fixture pages, and so the conformance suite, run without it.
func WithUnexposedFeedback[O any]() O {
	return unexposed.(O)
}

// PageFailure is the error a page handler's business failure becomes
// (docs/page-api.md §2.9): code is one of INVALID_PARAMS,
// PERMISSION_DENIED, ACTION_UNAVAILABLE or EXECUTION_FAILED, message is
// for the agent; for INVALID_PARAMS, details may name the parameters. A
// code that is not one of these is EXECUTION_FAILED with the message, and
// warning says so for the page's author ("" when all is well).
func PageFailure(code, message string, details map[string]any) (warning string, err error) {
	return pageFailure(code, message, details)
}

// FormRefused is the failure of a markup form whose submit the browser's
// constraint validation blocked: INVALID_PARAMS with a violation per
// field, at its param's path, each quoting what the page tells a person.
func FormRefused(fields []FormField) error {
	return formRefused(fields)
}
