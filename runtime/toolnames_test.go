package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/modeltool"
)

// adversarialToolIDs are capability id lists whose tool names collide,
// with one another, with the numeric suffixes, and at the 64-char bound.
var adversarialToolIDs = []struct {
	name string
	ids  []string
}{
	{"'.' and '_' collide", []string{"a.b", "a_b"}},
	{"a suffixed name is a real one", []string{"a.b", "a_b", "a_b_2"}},
	{"the real suffixed name comes first", []string{"a_b_2", "a.b", "a_b"}},
	{"a suffix lands on a later suffix", []string{"a.b", "a_b", "a-b", "a_b_2", "a_b_3", "a.b_2"}},
	{"'@' and '__' collide", []string{"x__y", "x@y", "x.y.z"}},
	{"64-char ids", []string{strings.Repeat("x", 63) + ".", strings.Repeat("x", 63) + "_"}},
	{"long ids that share 64 chars", []string{strings.Repeat("a", 64) + "1", strings.Repeat("a", 64) + "2", strings.Repeat("a", 64) + "3"}},
	{"a cut suffixed name is a real one", []string{strings.Repeat("a", 62) + "_2", strings.Repeat("a", 65), strings.Repeat("a", 66)}},
	{"two-digit suffixes at the bound", func() []string {
		var ids []string
		for i := range 12 {
			ids = append(ids, strings.Repeat("q", 64)+fmt.Sprint(i))
		}
		return ids
	}()},
}

// checkToolNames fails when names are not one valid, unique name per id.
func checkToolNames(t *testing.T, ids, names []string) {
	t.Helper()
	if len(names) != len(ids) {
		t.Fatalf("%d names for %d ids", len(names), len(ids))
	}
	seen := map[string]string{}
	for i, n := range names {
		if !toolNameRe.MatchString(n) {
			t.Errorf("name %q (%d chars) for %q is not ^[A-Za-z0-9_-]{1,64}$", n, len(n), ids[i])
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q share the tool name %q", other, ids[i], n)
		}
		seen[n] = ids[i]
	}
}

func TestToolNames(t *testing.T) {
	for _, tt := range adversarialToolIDs {
		t.Run(tt.name, func(t *testing.T) {
			names := modeltool.Names(tt.ids)
			checkToolNames(t, tt.ids, names)
			// A name without a collision is ToolName's.
			if names[0] != modeltool.Name(tt.ids[0]) {
				t.Errorf("first name %q, want ToolName's %q", names[0], modeltool.Name(tt.ids[0]))
			}
			// Tools names the same list the same way.
			e := newEnv(t)
			for _, id := range tt.ids {
				if strings.Contains(id, "@") {
					return // not a declarable action id
				}
				mustDeclare(t, e.rt, Action{ID: id, Title: id})
			}
			tools, err := e.rt.tools(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			var ids, got []string
			for _, tl := range tools {
				ids, got = append(ids, tl.Capability), append(got, tl.Name)
			}
			if diff := cmp.Diff(modeltool.Names(ids), got); diff != "" {
				t.Errorf("Tools names (-ToolNames +Tools):\n%s", diff)
			}
		})
	}
}

// Random lists over a tiny alphabet collide as often as they can.
func TestToolNamesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "a._-@2"
	for i := range 2000 {
		n := 1 + r.IntN(12)
		ids := make([]string, n)
		for j := range ids {
			l := 1 + r.IntN(4)
			if r.IntN(4) == 0 {
				l = 60 + r.IntN(10)
			}
			var b strings.Builder
			for range l {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
			ids[j] = b.String()
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkToolNames(t, ids, modeltool.Names(ids)) })
	}
}
