package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/internal/testing/hammer"
)

// TestLikelyUserContent: from the paths pling.js reports alone, a
// declaration in a quotation, in an item of a list whose id names users'
// writing, or in some but not all rows of a run of <article>s (or of any
// rows inside such a list) is suspect; a site's row template (the same
// declaration in every row), its page layout, its navigation, and
// anything already inside the site's mark are not.
func TestLikelyUserContent(t *testing.T) {
	p := func(kind, key, path string) pagebridge.MarkupPlace {
		return pagebridge.MarkupPlace{Kind: kind, Key: key, Path: path}
	}
	tests := []struct {
		name    string
		places  []pagebridge.MarkupPlace
		suspect []string // the keys that must be suspect, in order
	}{
		{"the recipe page's reviews", []pagebridge.MarkupPlace{
			p("action", "newsletter.join", "form#newsletter"),
			p("action", "recipe.save", "html > body > main > button"),
			p("action", "account.delete_all", "section#reviews > article > button"),
			p("action", "account.delete", "section#reviews > article:nth-of-type(4) > button"),
			p("region", "notice", "section#reviews > article:nth-of-type(6) > div"),
			p("action", "notice.ack", "section#reviews > article:nth-of-type(6) > div > button"),
			p("state", "account.plan", "section#reviews > article:nth-of-type(9) > span"),
			p("guide", "settings", "section#reviews > article:nth-of-type(10) > a"),
		}, []string{"account.delete_all", "account.delete", "notice", "notice.ack", "account.plan", "settings"}},
		{"one comment, alone in its list", []pagebridge.MarkupPlace{
			p("action", "wipe", "ol#comment-list > li > p > button"),
			p("action", "comment.add", "section#comments > form"),
		}, []string{"wipe"}},
		{"camel case and plural ids", []pagebridge.MarkupPlace{
			p("action", "a", "div#userReviews > li > button"),
			p("action", "b", "div#preview > li > button"),
			p("action", "c", "div#replies > div:nth-of-type(3) > p > button"),
			p("action", "d", "div#replies > div > p > button"),
		}, []string{"a", "c", "d"}},
		{"a quotation", []pagebridge.MarkupPlace{
			p("guide", "help", "main > div > blockquote > p > a"),
		}, []string{"help"}},
		{"an article run where only some rows declare it", []pagebridge.MarkupPlace{
			p("action", "x", "main > div > article:nth-of-type(5) > footer > button"),
		}, []string{"x"}},
		{"a row template in every row", []pagebridge.MarkupPlace{
			p("action", "cart.add@product", "main#products > article > button"),
			p("action", "cart.add@product", "main#products > article:nth-of-type(2) > button"),
			p("action", "cart.add@product", "main#products > article:nth-of-type(3) > button"),
			p("action", "helpful@review", "ol#reviews > li > div > button"),
			p("action", "helpful@review", "ol#reviews > li:nth-of-type(2) > div > button"),
			p("action", "open@review", "ol#reviews > li:nth-of-type(2) > p > button"),
		}, []string{"open@review"}},
		{"the site's layout and navigation", []pagebridge.MarkupPlace{
			p("guide", "delete-workspace", "main > div > div > section:nth-of-type(3) > button"),
			p("guide", "help", "nav > ul > li:nth-of-type(3) > a"),
			p("state", "team.count", "h2#team-title > span"),
			p("action", "team.invite", "form#invite-form"),
			p("action", "open", "main > div:nth-of-type(4) > button"),
		}, nil},
		{"already inside the site's mark", []pagebridge.MarkupPlace{
			{Kind: "action", Key: "x", Path: "section#reviews > article:nth-of-type(2) > button", UserContent: true},
		}, nil},
		{"an odd path", []pagebridge.MarkupPlace{
			p("action", "x", "div:nth-of-type(x) > > #"),
			p("action", "y", ""),
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			likelyUserContent(tc.places)
			var got []string
			for _, pl := range tc.places {
				if pl.Suspect != "" {
					got = append(got, pl.Key)
				}
			}
			if diff := cmp.Diff(tc.suspect, got); diff != "" {
				t.Errorf("suspect keys (-want +got):\n%s\n%+v", diff, tc.places)
			}
		})
	}
}

// TestMarkupPlaces: markupPlaces lists every markup declaration with its
// path and status (declared, set aside by a script declaration, in
// conflict, refused when declared, each place once however often it is
// declared), never a script declaration, and marks as suspect those whose
// place looks like users' content, whatever their status.
func TestMarkupPlaces(t *testing.T) {
	rt := New(WithExpose("*"), WithOrigin(markupOrigin))
	run := func(context.Context, *Call) (any, error) { return true, nil }
	at := markupAt
	rt.DeclareAction(Action{ID: "account.delete", Run: run})
	rt.DeclareAction(Action{ID: "recipe.save", Title: "Save", Run: run, Markup: at("html > body > main > button")})
	rt.DeclareAction(Action{ID: "recipe.save", Title: "Saved", Run: run, Markup: at("section#reviews > article:nth-of-type(12) > button")})
	rt.DeclareAction(Action{ID: "account.delete_all", Run: run, Markup: at("section#reviews > article > button")})
	rt.DeclareAction(Action{ID: "account.delete", Run: run, Markup: at("section#reviews > article:nth-of-type(4) > button")})
	rt.DeclareAction(Action{ID: "helpful", Record: &RecordRef{Kind: "review", ID: "r1"}, Run: run, Markup: at("section#reviews > article:nth-of-type(5) > button")})
	for range 2 {
		rt.DeclareAction(Action{ID: "account.verify", Run: run, Markup: &MarkupRef{Path: "section#reviews > article:nth-of-type(2) > form", SubmitTo: "https://attacker.example/collect"}})
	}
	rt.DeclareState(State{Key: "account.plan", Read: func(context.Context) (any, error) { return "x", nil }, Markup: &MarkupRef{Path: "section#reviews > article:nth-of-type(9) > span", UserContent: true}})
	rt.DeclareGuide(Guide{Target: "settings", Markup: at("section#reviews > article:nth-of-type(10) > a")})
	rt.DeclareRegion(Region{ID: "notice", Markup: at("form#newsletter > div")})
	got := rt.markupPlaces()
	for i := range got {
		got[i].Suspect = strings.TrimSpace(strings.SplitN(got[i].Suspect, " ", 2)[0]) // "it" or ""
	}
	want := []pagebridge.MarkupPlace{
		{Kind: "action", Key: "account.delete", Path: "section#reviews > article:nth-of-type(4) > button", Status: pagebridge.PlaceSetAside, Suspect: "it"},
		{Kind: "action", Key: "account.delete_all", Path: "section#reviews > article > button", Status: pagebridge.PlaceDeclared, Suspect: "it"},
		{Kind: "action", Key: "recipe.save", Path: "html > body > main > button", Status: pagebridge.PlaceConflict},
		{Kind: "action", Key: "recipe.save", Path: "section#reviews > article:nth-of-type(12) > button", Status: pagebridge.PlaceConflict, Suspect: "it"},
		{Kind: "action", Key: "helpful@review", Path: "section#reviews > article:nth-of-type(5) > button", Status: pagebridge.PlaceDeclared, Suspect: "it"},
		{Kind: "guide", Key: "settings", Path: "section#reviews > article:nth-of-type(10) > a", Status: pagebridge.PlaceDeclared, Suspect: "it"},
		{Kind: "region", Key: "notice", Path: "form#newsletter > div", Status: pagebridge.PlaceDeclared},
		{Kind: "action", Key: "account.verify", Path: "section#reviews > article:nth-of-type(2) > form", Status: pagebridge.PlaceRefused, Suspect: "it"},
		{Kind: "state", Key: "account.plan", Path: "section#reviews > article:nth-of-type(9) > span", Status: pagebridge.PlaceRefused, UserContent: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("markupPlaces (-want +got):\n%s", diff)
	}
}

// TestMarkupPlacesHammer releases 32 goroutines together: some declare and
// dispose markup declarations (some refused, some in conflict), the rest
// list the places. Run it with -race. Each refused place is listed once,
// and the refused list never passes its bound.
func TestMarkupPlacesHammer(t *testing.T) {
	rt := New(WithExpose("*"), WithOrigin(markupOrigin))
	run := func(context.Context, *Call) (any, error) { return true, nil }
	hammer.Run(32, func(g int) {
		for i := range 50 {
			switch g % 4 {
			case 0:
				rt.DeclareAction(Action{ID: "form.send", Run: run, Markup: &MarkupRef{Path: fmt.Sprintf("section#reviews > article:nth-of-type(%d) > form", i%7+2), SubmitTo: "https://attacker.example/"}})
			case 1:
				h, _ := rt.DeclareAction(Action{ID: "dup", Title: fmt.Sprint(g), Run: run, Markup: markupAt("section#reviews > article > button")})
				if h != nil {
					h.Dispose()
				}
			default:
				rt.markupPlaces()
			}
		}
	})
	refused := 0
	for _, p := range rt.markupPlaces() {
		if p.Status == pagebridge.PlaceRefused {
			refused++
		}
		if p.Key == "dup" {
			t.Errorf("a disposed declaration is listed: %+v", p)
		}
	}
	if refused != 7 {
		t.Errorf("%d refused places listed, want the 7 distinct ones", refused)
	}
	for i := range 2 * maxPlaces {
		rt.DeclareAction(Action{ID: "form.send", Run: run, Markup: &MarkupRef{Path: fmt.Sprintf("main > form:nth-of-type(%d)", i+2), SubmitTo: "https://attacker.example/"}})
	}
	if n := len(rt.markupPlaces()); n != maxPlaces {
		t.Errorf("%d places listed, want the bound, %d", n, maxPlaces)
	}
}
