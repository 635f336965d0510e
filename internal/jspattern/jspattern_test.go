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
