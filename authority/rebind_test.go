package authority

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"none", "SELECT 1", "SELECT 1"},
		{"in order", "UPDATE t SET a = ?, b = ? WHERE id = ?", "UPDATE t SET a = $1, b = $2 WHERE id = $3"},
		{"ten and more", "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
		{"string literal", "SELECT '?', ? FROM t WHERE x = 'a?b'", "SELECT '?', $1 FROM t WHERE x = 'a?b'"},
		{"escaped quote", "SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1"},
		{"quoted identifier", `SELECT "we?ird", ? FROM "t""?"`, `SELECT "we?ird", $1 FROM "t""?"`},
		{"line comment", "SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{"line comment at end", "SELECT ? -- why?", "SELECT $1 -- why?"},
		{"block comment", "SELECT /* a ? b */ ?", "SELECT /* a ? b */ $1"},
		{"unterminated literal", "SELECT ?, 'a?", "SELECT $1, 'a?"},
		{"unterminated comment", "SELECT ? /* a?", "SELECT $1 /* a?"},
		{"dollar numbers kept", "SELECT $1", "SELECT $1"},
		{"minus is not a comment", "SELECT ? - ?", "SELECT $1 - $2"},
		{"multibyte text", "SELECT 'é?', ? -- ü?", "SELECT 'é?', $1 -- ü?"},
		{"numbered", "SELECT ?2, ?1, ?2", "SELECT $2, $1, $2"},
		{"placeholder before a digit-free word", "SELECT ?||'x'", "SELECT $1||'x'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := rebind(c.in); got != c.want {
				t.Errorf("rebind(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

var placeholder = regexp.MustCompile(`\$[0-9]+`)

// FuzzRebind: rebind never panics and changes nothing but placeholders:
// with the digits dropped and $ read as ?, the query comes back; on a
// query with no $ or digits of its own, the $n count 1, 2, … in order.
func FuzzRebind(f *testing.F) {
	for _, s := range []string{"SELECT ?", "SELECT '?', ? -- ?\n/* ? */ \"?\"", "'it''s' ?", "?'", "/*", "--", "-", "?0?"} {
		f.Add(s)
	}
	strip := func(s string) string {
		return strings.ReplaceAll(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, s), "$", "?")
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := rebind(q)
		if strip(got) != strip(q) {
			t.Fatalf("rebind(%q) = %q changes more than placeholders", q, got)
		}
		if strings.ContainsAny(q, "$0123456789") {
			return
		}
		for i, m := range placeholder.FindAllString(got, -1) {
			if m != "$"+strconv.Itoa(i+1) {
				t.Fatalf("rebind(%q) = %q: placeholder %d is %s", q, got, i+1, m)
			}
		}
	})
}

// Every migration has a twin of the same version and name in the other
// dialect's directory, so that both stores hold the same schema.
func TestMigrationsPairUp(t *testing.T) {
	names := func(fsys fs.FS, dir string) []string {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if diff := cmp.Diff(names(sqliteMigrations, "migrations/sqlite"), names(postgresMigrations, "migrations/postgres")); diff != "" {
		t.Errorf("migrations/sqlite and migrations/postgres differ (-sqlite +postgres): port each migration to both\n%s", diff)
	}
}
