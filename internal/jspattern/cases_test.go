package jspattern_test

import (
	"testing"

	"github.com/pling-go/pling/internal/jspattern"
)

type outcome struct {
	Valid bool
	Match []bool
}

// cases are patterns on which RE2 (Go's regexp) and ECMAScript disagree,
// or which the subset refuses, each with the answer ECMAScript gives.
var cases = []struct {
	name    string
	pattern string
	inputs  []string
	want    outcome
}{
	{"no match between the halves of a surrogate pair", `\B`, []string{"_😀A", "😀"}, outcome{true, []bool{false, true}}},
	{"lookahead", `^(?=.*\d)[a-z0-9]+$`, []string{"abc1", "abc"}, outcome{true, []bool{true, false}}},
	{"negative lookahead", `^(?!admin$)`, []string{"admin", "adminx"}, outcome{true, []bool{false, true}}},
	{"lookbehind", `(?<=\$)\d+`, []string{"$12", "12"}, outcome{true, []bool{true, false}}},
	{"backreference", `^(\w)\1$`, []string{"aa", "ab"}, outcome{true, []bool{true, false}}},
	{"backreference to a group that did not take part matches empty", `^(?:(a)|b)\1c$`, []string{"bc", "aac", "bbc"}, outcome{true, []bool{true, true, false}}},
	{"\\d is ASCII only", `^\d+$`, []string{"123", "١٢٣", "１２"}, outcome{true, []bool{true, false, false}}},
	{"\\w is ASCII only", `^\w+$`, []string{"abc_1", "é"}, outcome{true, []bool{true, false}}},
	{"\\s is Unicode white space", `^\s$`, []string{"\u00a0", "\ufeff", "\u2028", "\v", "x"}, outcome{true, []bool{true, true, true, true, false}}},
	{"\\b is ASCII", `\bé`, []string{"é", "aé"}, outcome{true, []bool{false, true}}},
	{"$ is the end, not before a final newline", `^[a-z]+$`, []string{"abc", "abc\n"}, outcome{true, []bool{true, false}}},
	{". stops at every line terminator", `^a.b$`, []string{"axb", "a\nb", "a\rb", "a\u2028b", "a😀b"}, outcome{true, []bool{true, false, false, false, true}}},
	{"astral code point by \\u{}", `^\u{1F600}$`, []string{"😀"}, outcome{true, []bool{true}}},
	{"surrogate pair escape", `^\uD83D\uDE00$`, []string{"😀"}, outcome{true, []bool{true}}},
	{"class with a negated class escape", `^[^\D]+$`, []string{"42", "4a"}, outcome{true, []bool{true, false}}},
	{"empty class matches nothing", `[]`, []string{"", "a"}, outcome{true, []bool{false, false}}},
	{"[^] matches anything", `^[^]$`, []string{"\n", "😀"}, outcome{true, []bool{true, true}}},
	{"\\x, \\c and \\0", `^\x41\cJ\0$`, []string{"A\n\x00"}, outcome{true, []bool{true}}},
	{"lazy quantifier", `^a+?b{2,3}?$`, []string{"aabbb", "ab"}, outcome{true, []bool{true, false}}},
	{"(?i) is not ECMAScript", `(?i)abc`, []string{"abc"}, outcome{false, nil}},
	{"\\z is not ECMAScript", `abc\z`, []string{"abc"}, outcome{false, nil}},
	{"\\pL is not ECMAScript", `\pL`, []string{"a"}, outcome{false, nil}},
	{"property escapes are outside the subset", `\p{L}`, []string{"a"}, outcome{false, nil}},
	{"named groups are outside the subset", `(?<y>\d{4})`, []string{"2024"}, outcome{false, nil}},
	{"a repeated group's backreference is outside the subset", `^(?:(a)|b)*\1$`, []string{"ab"}, outcome{false, nil}},
	{"a forward reference is outside the subset", `\1(a)`, []string{"a"}, outcome{false, nil}},
	{"lone brace", `a{`, nil, outcome{false, nil}},
	{"lone closing bracket", `a]`, nil, outcome{false, nil}},
	{"identity escape of a letter", `\a`, nil, outcome{false, nil}},
	{"escaped dash outside a class", `\-`, nil, outcome{false, nil}},
	{"escaped dash in a class", `^[\-]$`, []string{"-"}, outcome{true, []bool{true}}},
	{"class escape in a range", `[\d-z]`, nil, outcome{false, nil}},
	{"range out of order", `[z-a]`, nil, outcome{false, nil}},
	{"quantified lookahead", `(?=a)*`, nil, outcome{false, nil}},
	{"nothing to repeat", `*a`, nil, outcome{false, nil}},
	{"backreference beyond the groups", `(a)\2`, nil, outcome{false, nil}},
	{"unterminated group", `(a`, nil, outcome{false, nil}},
	{"unmatched )", `a)`, nil, outcome{false, nil}},
	{"too large a bound", `a{1001}`, nil, outcome{false, nil}},
	{"\\0 before a digit", `\01`, nil, outcome{false, nil}},
	{"bad \\u{}", `\u{110000}`, nil, outcome{false, nil}},
}

// TestCheck: Check accepts and refuses the table's patterns as ECMAScript
// (u flag) and the subset say, in every build: the module's (GOOS=js,
// which parses without writing the regexp2 rewrite) as in native Go.
func TestCheck(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := jspattern.Check(tc.pattern); (err == nil) != tc.want.Valid {
				t.Errorf("Check(%q) = %v, want valid %v", tc.pattern, err, tc.want.Valid)
			}
		})
	}
}
