package tagfloor

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema/pagespec"
)

func ptr(s string) *string { return &s }

func list(s ...string) *[]string { s = append([]string{}, s...); return &s }

// TestConfigureCannotWeakenTheTag: what pling.configure sets is held to
// what the script tag set; what the tag leaves out, configure sets.
func TestConfigureCannotWeakenTheTag(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c, tag    pagespec.Config
		want      pagespec.Config
		warnCount int
	}{
		{"expose * under the tag's list", pagespec.Config{Expose: []string{"*"}}, pagespec.Config{Expose: []string{"list@invoice", "void@invoice"}},
			pagespec.Config{Expose: []string{"list@invoice", "void@invoice"}}, 1},
		{"narrower than the tag", pagespec.Config{Expose: []string{"cart.add"}}, pagespec.Config{Expose: []string{"cart.*"}},
			pagespec.Config{Expose: []string{"cart.add"}}, 0},
		{"overlap only", pagespec.Config{Expose: []string{"*.add"}}, pagespec.Config{Expose: []string{"cart.*"}},
			pagespec.Config{Expose: []string{}}, 1},
		{"tag exposes nothing", pagespec.Config{Expose: []string{"*"}}, pagespec.Config{Expose: []string{}},
			pagespec.Config{Expose: []string{}}, 1},
		{"no data-expose", pagespec.Config{Expose: []string{"*"}}, pagespec.Config{},
			pagespec.Config{Expose: []string{"*"}}, 0},
		{"anonymous widened", pagespec.Config{Anonymous: list("*")}, pagespec.Config{Anonymous: list()},
			pagespec.Config{Anonymous: list()}, 1},
		{"anonymous unset takes the tag's", pagespec.Config{}, pagespec.Config{Anonymous: list("read.*")},
			pagespec.Config{Anonymous: list("read.*")}, 0},
		{"approvals back to page", pagespec.Config{Approvals: "page", Authority: "https://a.example"},
			pagespec.Config{Approvals: "authority", Authority: "https://a.example"},
			pagespec.Config{Approvals: "authority", Authority: "https://a.example"}, 1},
		{"another authority", pagespec.Config{Authority: "https://evil.example"}, pagespec.Config{Authority: "https://a.example"},
			pagespec.Config{Authority: "https://a.example"}, 1},
		{"subject replaced", pagespec.Config{Subject: ptr("bob")}, pagespec.Config{Subject: ptr("alice")},
			pagespec.Config{Subject: ptr("alice")}, 1},
		{"subject: nobody signed in", pagespec.Config{}, pagespec.Config{Subject: ptr("")},
			pagespec.Config{Subject: ptr("")}, 0},
		{"subject where the tag is silent", pagespec.Config{Subject: ptr("bob")}, pagespec.Config{},
			pagespec.Config{Subject: ptr("bob")}, 0},
		{"approvals page where the tag is silent", pagespec.Config{Approvals: "page"}, pagespec.Config{},
			pagespec.Config{Approvals: "page"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, notes := Apply(tc.c, tc.tag)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
			if len(notes) != tc.warnCount {
				t.Errorf("notes %q, want %d", notes, tc.warnCount)
			}
		})
	}
}

// TestNarrowAllowsOnlyWhatBothAllow: every id Narrow's patterns allow is
// allowed by both lists.
func TestNarrowAllowsOnlyWhatBothAllow(t *testing.T) {
	ids := []string{"cart.add", "cart.remove", "list@invoice", "void@invoice", "a.b.add", "x", "", "*"}
	lists := [][]string{{"*"}, {"cart.*"}, {"*.add"}, {"*@invoice"}, {"void@*"}, {"x", "cart.add"}, {}, {"*a*"}}
	for _, a := range lists {
		for _, b := range lists {
			n := Narrow(a, b)
			for _, id := range ids {
				if runtime.MatchAny(n, id) && !(runtime.MatchAny(a, id) && runtime.MatchAny(b, id)) {
					t.Errorf("Narrow(%q, %q) = %q allows %q, which not both allow", a, b, n, id)
				}
			}
		}
	}
}
