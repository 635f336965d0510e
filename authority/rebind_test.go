package authority

import "testing"

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
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Rebind(c.in); got != c.want {
				t.Errorf("Rebind(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}
