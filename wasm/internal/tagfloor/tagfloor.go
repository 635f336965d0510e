// Package tagfloor keeps what a page's script tag sets (data-expose,
// data-anonymous, data-authority, data-approvals, data-subject) from
// being weakened by pling.configure: a script that runs before pling.js —
// or an agent with DevTools that adds the stub and configures the page
// first — may narrow them, never widen them (docs/page-api.md §2.7).
package tagfloor

import (
	"slices"
	"strings"
	"unicode"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema/pagespec"
)

// Apply returns c held to tag, and a line for the page's author for each
// thing of c that tag did not allow. What tag does not set, c keeps.
//
//   - expose, anonymous: only what both allow (Narrow);
//   - authority: tag's, when it names one;
//   - approvals: "authority" when tag says so;
//   - subject: tag's, when it names one (even "": nobody signed in).
func Apply(c, tag pagespec.Config) (pagespec.Config, []string) {
	var notes []string
	if tag.Expose != nil {
		n := Narrow(c.Expose, tag.Expose)
		if !slices.Equal(n, c.Expose) {
			notes = append(notes, "pling: configure({expose}) cannot widen data-expose; exposed: what both allow")
		}
		c.Expose = n
	}
	if tag.Anonymous != nil {
		if c.Anonymous == nil {
			c.Anonymous = tag.Anonymous
		} else {
			n := Narrow(*c.Anonymous, *tag.Anonymous)
			if !slices.Equal(n, *c.Anonymous) {
				notes = append(notes, "pling: configure({anonymous}) cannot widen data-anonymous; anonymous: what both allow")
			}
			c.Anonymous = &n
		}
	}
	if tag.Authority != "" && c.Authority != tag.Authority {
		if c.Authority != "" {
			notes = append(notes, "pling: configure({authority}) cannot replace data-authority; the tag's is followed")
		}
		c.Authority = tag.Authority
	}
	if tag.Subject != nil && (c.Subject == nil || *c.Subject != *tag.Subject) {
		if c.Subject != nil {
			notes = append(notes, "pling: configure({subject}) cannot replace data-subject; the tag's is the person signed in")
		}
		c.Subject = tag.Subject
	}
	if tag.Approvals == "authority" && c.Approvals != "authority" {
		notes = append(notes, `pling: configure({approvals}) cannot undo data-approvals="authority"; a person approves on the authority's screen`)
		c.Approvals = "authority"
	}
	return c, notes
}

// Narrow is what both pattern lists allow, as far as patterns can say it:
// each pattern of a that some pattern of b covers, and each of b that
// some pattern of a covers. It never allows what either list does not;
// where two patterns only overlap (cart.* and *.add), it allows neither.
func Narrow(a, b []string) []string {
	out := []string{}
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range a {
		if coveredBy(p, b) {
			add(p)
		}
	}
	for _, p := range b {
		if coveredBy(p, a) {
			add(p)
		}
	}
	return out
}

// coveredBy reports whether some pattern of ps matches every id p
// matches. Matching p's text itself, its '*' read as a character, is
// enough: a pattern's other characters only ever match themselves, so its
// stars absorb p's star as they would any run of characters.
func coveredBy(p string, ps []string) bool {
	for _, q := range ps {
		if runtime.Match(q, p) {
			return true
		}
	}
	return false
}

// List reads a script tag's list of patterns as pling.js does: separated
// by spaces or commas. It is never nil, so an empty attribute is an
// empty list (nothing), not an absent one.
func List(s string) []string {
	return append([]string{}, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })...)
}
