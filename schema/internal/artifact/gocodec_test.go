package artifact_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/schema/internal/artifact"
)

type (
	codecFloat32   struct{ F float32 }
	codecMarshaler struct{ T time.Time }
	codecRaw       struct{ R json.RawMessage }
	codecBytes     struct{ B []byte }
	codecString    struct {
		N int `json:"n,string"`
	}
	codecDup struct {
		A string `json:"X"`
		X string
	}
	codecEmbedded struct{ codecInner }
	codecInner    struct{ X int }
	codecIntKeys  struct{ M map[int]string }
	codecOK       struct {
		N json.Number       `json:"n"`
		P *float64          `json:"p,omitempty"`
		M map[string]*int   `json:"m"`
		S [][]string        `json:"s,omitempty"`
		I codecInner        `json:"i,omitempty"`
		Q map[string]string `json:"q,omitempty"`
	}
)

// refusal is a type a generator must refuse, and a part of the error it
// must give.
type refusal struct {
	name string
	typ  reflect.Type
	want string
}

// wantRefusals runs gen (named name) on each case's type as its one root
// and wants an error about the case's want.
func wantRefusals(t *testing.T, name string, gen func(pkg string, roots []reflect.Type) ([]byte, error), cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := gen("x", []reflect.Type{tc.typ}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%v) = %v, want an error about %q", name, tc.typ, err, tc.want)
			}
		})
	}
}

// TestCodecRefuses: a field the generator cannot write exactly as
// encoding/json does fails generation instead of drifting on the wire.
func TestCodecRefuses(t *testing.T) {
	wantRefusals(t, "CodecOf", artifact.CodecOf, []refusal{
		{"float32", reflect.TypeFor[codecFloat32](), "float32"},
		{"marshaler", reflect.TypeFor[codecMarshaler](), "marshals itself"},
		{"raw message", reflect.TypeFor[codecRaw](), "marshals itself"},
		{"byte slice", reflect.TypeFor[codecBytes](), "byte slices"},
		{"string option", reflect.TypeFor[codecString](), `json option "string"`},
		{"duplicate name", reflect.TypeFor[codecDup](), `two fields named "X"`},
		{"embedded", reflect.TypeFor[codecEmbedded](), "embedded"},
		{"int keys", reflect.TypeFor[codecIntKeys](), "map keys"},
		{"not a struct", reflect.TypeFor[string](), "not a named struct"},
	})
	wantRefusals(t, "DecoderOf", artifact.DecoderOf, []refusal{
		{"decoder float32", reflect.TypeFor[codecFloat32](), "float32"},
		{"decoder raw message", reflect.TypeFor[codecRaw](), "reads itself"},
		{"decoder json.Number", reflect.TypeFor[codecOK](), "reads itself"},
		{"decoder embedded", reflect.TypeFor[codecEmbedded](), "embedded"},
		{"decoder int keys", reflect.TypeFor[codecIntKeys](), "map keys"},
	})
	t.Run("supported", func(t *testing.T) {
		src, err := artifact.CodecOf("x", []reflect.Type{reflect.TypeFor[codecOK]()})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"func appendcodecOK(", "func appendcodecInner(", "schema.AppendValue(dst, v.N)", "jsonvalue.SortedKeys(v.M)"} {
			if !strings.Contains(string(src), want) {
				t.Errorf("generated code lacks %q:\n%s", want, src)
			}
		}
	})
}
