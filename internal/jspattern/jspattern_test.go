//go:build !js

package jspattern_test

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/jspattern"
	"github.com/pling-go/pling/internal/testing/require"
)

// match evaluates p on s as native Go and the wazero host do.
func match(p, s string) (valid, ok bool) {
	q, err := jspattern.Regexp2(p)
	if err != nil {
		return false, false
	}
	re, err := regexp2.Compile(q, regexp2.None)
	if err != nil {
		panic("Regexp2 wrote what regexp2 refuses: " + q + ": " + err.Error())
	}
	ok, err = re.MatchString(s)
	if err != nil {
		panic(err)
	}
	return true, ok
}

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

func goOutcome(p string, inputs []string) outcome {
	var o outcome
	if jspattern.Check(p) != nil {
		return o
	}
	o.Valid = true
	for _, s := range inputs {
		_, m := match(p, s)
		o.Match = append(o.Match, m)
	}
	return o
}

// TestECMAScriptMeaning: each pattern means what ECMAScript (u flag) says,
// not what RE2 says, in the evaluator native Go and wazero use.
func TestECMAScriptMeaning(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, goOutcome(tc.pattern, tc.inputs)); diff != "" {
				t.Errorf("%q (-ECMAScript +Go):\n%s", tc.pattern, diff)
			}
		})
	}
}

// nodeScript answers each {p, in} line with validity and matches by V8's
// own RegExp with the u flag, after the subset's Check (passed in).
const nodeScript = `
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
const out = lines.map(l => {
  const {p, w, in: inputs, subset} = JSON.parse(l);
  let re;
  try { new RegExp(p, "u"); re = new RegExp(w, "u"); } catch (e) { return {Valid: false, Match: null, V8Valid: false}; }
  if (!subset) return {Valid: false, Match: null, V8Valid: true};
  return {Valid: true, Match: inputs.length ? inputs.map(s => re.test(s)) : null, V8Valid: true};
});
process.stdout.write(JSON.stringify(out));
`

type nodeOutcome struct {
	Valid   bool
	Match   []bool
	V8Valid bool
}

// TestDifferentialNode: on the table's patterns and on random ones built
// from ECMAScript's syntax, the Go evaluator and V8's RegExp (the module's
// evaluator in a browser and in Node) agree on validity and on every
// match, and every pattern the subset accepts V8 accepts too.
func TestDifferentialNode(t *testing.T) {
	node := require.Node(t)
	type item struct {
		P      string   `json:"p"`
		W      string   `json:"w"`
		In     []string `json:"in"`
		Subset bool     `json:"subset"`
	}
	var items []item
	for _, tc := range cases {
		items = append(items, item{P: tc.pattern, In: tc.inputs})
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		items = append(items, item{P: randomPattern(rnd), In: randomInputs(rnd)})
	}
	var in strings.Builder
	for k := range items {
		items[k].Subset = jspattern.Check(items[k].P) == nil
		items[k].W = jspattern.ForRegExp(items[k].P)
		b, _ := json.Marshal(items[k])
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command(node, "-e", nodeScript)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []nodeOutcome
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for k, it := range items {
		g := goOutcome(it.P, it.In)
		if it.Subset && !got[k].V8Valid {
			t.Errorf("%q: the subset accepts it, V8 refuses it", it.P)
			continue
		}
		if !it.Subset {
			continue
		}
		accepted++
		if diff := cmp.Diff(got[k].Match, g.Match); diff != "" {
			t.Errorf("%q on %q (-V8 +Go):\n%s", it.P, it.In, diff)
		}
	}
	t.Logf("%d patterns, %d in the subset", len(items), accepted)
}

var atoms = []string{"a", "b", ".", `\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `\b`, `\B`, "^", "$", "[a-c]", "[^a]", `[\d_]`, `[^\s]`, "[]", "[^]",
	"(a)", "(?:ab)", "(?=a)", "(?!b)", "(?<=a)", "(?<!b)", `\1`, `\n`, `\u00e9`, `\u{1F600}`, "é", "😀", " ", "-", `\.`, `\/`, "{", "}", "]", `\-`,
	"(a|b)", "(", ")", "|", `\x41`, `\cJ`, `\0`, `\k<a>`, `(?<a>a)`, `\p{L}`, "\u00a0"}

var quants = []string{"", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "{2,1}", "{"}

func randomPattern(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(5) {
		b.WriteString(atoms[r.IntN(len(atoms))])
		b.WriteString(quants[r.IntN(len(quants))])
	}
	return b.String()
}

var alphabet = []string{"a", "b", "c", "1", "_", " ", "\n", "\r", "é", "😀", "\u00a0", "\u2028", "A", "-", ".", "/", "\x00"}

func randomInputs(r *rand.Rand) []string {
	in := []string{""}
	for range 4 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		in = append(in, b.String())
	}
	return in
}

// FuzzRegexp2: whatever the subset accepts, Regexp2's rewrite compiles.
func FuzzRegexp2(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.pattern)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q, err := jspattern.Regexp2(p)
		if err != nil {
			return
		}
		if _, err := regexp2.Compile(q, regexp2.None); err != nil {
			t.Fatalf("%q rewritten as %q: %v", p, q, err)
		}
	})
}
