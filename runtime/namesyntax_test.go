package runtime

import (
	"regexp"
	"testing"
)

// TestNameSyntaxMatchesRegexp checks the written-out name syntaxes against
// the regular expressions they replace, on every one- and two-byte string
// and on names around the length limits.
func TestNameSyntaxMatchesRegexp(t *testing.T) {
	cases := []struct {
		name string
		got  nameSyntax
		re   *regexp.Regexp
	}{
		{"id", idRe, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)},
		{"record id", recordIDRe, regexp.MustCompile(`^[A-Za-z0-9._~:-]{1,128}$`)},
		{"param", paramRe, regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)},
	}
	var inputs []string
	for a := 0; a < 256; a++ {
		inputs = append(inputs, string([]byte{byte(a)}))
		for b := 0; b < 256; b++ {
			inputs = append(inputs, string([]byte{byte(a), byte(b)}))
		}
	}
	for _, n := range []int{0, 63, 64, 65, 127, 128, 129, 300} {
		for _, c := range []string{"a", "_", ".", "~", "é"} {
			s := ""
			for len(s) < n {
				s += c
			}
			inputs = append(inputs, s, "a"+s, "a"+s+"\n")
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range inputs {
				if got, want := tc.got.MatchString(in), tc.re.MatchString(in); got != want {
					t.Fatalf("%q: %v, the regexp says %v", in, got, want)
				}
			}
		})
	}
}
