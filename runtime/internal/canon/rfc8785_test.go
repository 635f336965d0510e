package canon

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/require"
)

// The number samples of RFC 8785 Appendix B: an IEEE-754 double, as its 64
// bits in hex, and how JCS writes it. NaN and Infinity, which the appendix
// lists as errors, are in TestRFC8785NumbersNotFinite.
var rfc8785Numbers = []struct {
	bits uint64
	want string
	note string
}{
	{0x0000000000000000, "0", "zero"},
	{0x8000000000000000, "0", "minus zero"},
	{0x0000000000000001, "5e-324", "min pos number"},
	{0x8000000000000001, "-5e-324", "min neg number"},
	{0x7fefffffffffffff, "1.7976931348623157e+308", "max pos number"},
	{0xffefffffffffffff, "-1.7976931348623157e+308", "max neg number"},
	{0x4340000000000000, "9007199254740992", "max pos int"},
	{0xc340000000000000, "-9007199254740992", "max neg int"},
	{0x4430000000000000, "295147905179352830000", "~2**68"},
	{0x44b52d02c7e14af5, "9.999999999999997e+22", ""},
	{0x44b52d02c7e14af6, "1e+23", ""},
	{0x44b52d02c7e14af7, "1.0000000000000001e+23", ""},
	{0x444b1ae4d6e2ef4e, "999999999999999700000", ""},
	{0x444b1ae4d6e2ef4f, "999999999999999900000", ""},
	{0x444b1ae4d6e2ef50, "1e+21", ""},
	{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7", ""},
	{0x3eb0c6f7a0b5ed8d, "0.000001", ""},
	{0x41b3de4355555553, "333333333.3333332", ""},
	{0x41b3de4355555554, "333333333.33333325", ""},
	{0x41b3de4355555555, "333333333.3333333", ""},
	{0x41b3de4355555556, "333333333.3333334", ""},
	{0x41b3de4355555557, "333333333.33333343", ""},
	{0xbecbf647612f3696, "-0.0000033333333333333333", ""},
	{0x43143ff3c1cb0959, "1424953923781206.2", "round to even"},
}

func TestRFC8785Numbers(t *testing.T) {
	for _, tt := range rfc8785Numbers {
		t.Run(strconv.FormatUint(tt.bits, 16)+" "+tt.note, func(t *testing.T) {
			f := math.Float64frombits(tt.bits)
			got, err := Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal(%v) = %s, want %s", f, got, tt.want)
			}
			// The same double spelled as JSON text (json.Number) too.
			got, err = Marshal(json.Number(strconv.FormatFloat(f, 'g', -1, 64)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal(json.Number %v) = %s, want %s", f, got, tt.want)
			}
		})
	}
}

func TestRFC8785NumbersNotFinite(t *testing.T) {
	for _, bits := range []uint64{0x7fffffffffffffff, 0x7ff0000000000000, 0xfff0000000000000} {
		if b, err := Marshal(math.Float64frombits(bits)); err == nil {
			t.Errorf("Marshal(%x) = %s, want an error", bits, b)
		}
	}
}

// The examples of RFC 8785: the sorting example of §3.2.3, keys in UTF-16
// code unit order, where U+1F600 (the surrogate pair D83D DE00) comes
// before U+FB33; and the example of §3.2.2 (and its Appendix A): numbers,
// string escapes and literals.
func TestRFC8785Examples(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"sorting", `{
			"\u20ac": "Euro Sign",
			"\r": "Carriage Return",
			"\ufb33": "Hebrew Letter Dalet With Dagesh",
			"1": "One",
			"\ud83d\ude00": "Emoji: Grinning Face",
			"\u0080": "Control",
			"\u00f6": "Latin Small Letter O With Diaeresis"
		}`, `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`},
		{"numbers, strings and literals", `{
			"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
			"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
			"literals": [null, true, false]
		}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(decode(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNumbersAgainstNode writes random doubles both ways, appendNumber and
// JavaScript's JSON.stringify in Node, and wants the same text. It is
// skipped without node, and in -short mode.
func TestNumbersAgainstNode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	node := require.Node(t)
	r := rand.New(rand.NewPCG(8785, 1))
	fs := make([]float64, 0, 5000)
	for _, tt := range rfc8785Numbers {
		fs = append(fs, math.Float64frombits(tt.bits))
	}
	for len(fs) < cap(fs) {
		var f float64
		switch len(fs) % 4 {
		case 0: // any bit pattern
			f = math.Float64frombits(r.Uint64())
		case 1: // around the plain/exponent boundaries
			f = math.Pow(10, float64(r.IntN(50)-25)) * (1 + r.Float64())
		case 2: // integers and short decimals
			f = float64(r.Int64N(1<<54)) / math.Pow(10, float64(r.IntN(12)))
		default:
			f = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		fs = append(fs, f)
	}
	// Each double crosses as its bits so neither side parses decimal text.
	var in strings.Builder
	for _, f := range fs {
		in.WriteString(strconv.FormatUint(math.Float64bits(f), 16))
		in.WriteByte('\n')
	}
	cmd := exec.Command(node, "-e", `
const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
const dv = new DataView(new ArrayBuffer(8));
const out = lines.map(h => { dv.setBigUint64(0, BigInt("0x" + h)); return JSON.stringify(dv.getFloat64(0)); });
process.stdout.write(out.join("\n"));`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	want := strings.Split(string(out), "\n")
	if len(want) != len(fs) {
		t.Fatalf("node wrote %d lines for %d numbers", len(want), len(fs))
	}
	bad := 0
	for i, f := range fs {
		if got := string(appendNumber(nil, f)); got != want[i] {
			t.Errorf("%x (%v): appendNumber = %s, JSON.stringify = %s", math.Float64bits(f), f, got, want[i])
			if bad++; bad > 10 {
				t.FailNow()
			}
		}
	}
}
