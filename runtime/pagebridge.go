package runtime

import "github.com/pling-go/pling/internal/pagebridge"

// The page bridge (the wasm module) and the author tools call these
// through internal/pagebridge: a user of the runtime in Go never needs
// them, so they are not part of this package's API.
func init() {
	pagebridge.Register(pagebridge.Funcs[*Runtime, Action, Availability, Option]{
		Refuse:        (*Runtime).refuse,
		SiteExposes:   (*Runtime).siteExposes,
		Lint:          (*Runtime).lint,
		MarkupPlaces:  (*Runtime).markupPlaces,
		CheckFailed:   checkFailed,
		AuthorWarning: withAuthorWarning,
		Unexposed:     withUnexposedFeedback(),
		PageFailure:   pageFailure,
		FormRefused:   formRefused,
	})
}
