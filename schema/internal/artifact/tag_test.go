package artifact

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTag(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		tag  string
		want tagOptions
	}{
		{"empty", "", tagOptions{}},
		{"required const", "required,const=pling.surface/0.1", tagOptions{required: true, constVal: str("pling.surface/0.1")}},
		{"escaped comma in pattern", `required,pattern=^[A-Za-z0-9._:-]{1\,128}$`,
			tagOptions{required: true, pattern: "^[A-Za-z0-9._:-]{1,128}$"}},
		{"other backslashes kept", `pattern=^\d+\.\d+$`, tagOptions{pattern: `^\d+\.\d+$`}},
		{"bounds", "min=1,max=256", tagOptions{min: json.Number("1"), max: json.Number("256")}},
		{"enum", "enum=read|write|destructive", tagOptions{enum: []string{"read", "write", "destructive"}}},
		{"surface codes", "required,enum=@surface", tagOptions{required: true, codes: SurfaceCodeName}},
		{"action codes", "enum=@action", tagOptions{codes: ActionCodeName}},
		{"nullable", "required,nullable", tagOptions{required: true, nullable: true}},
		{"oneOf", "oneOf=A|B", tagOptions{oneOf: []string{"A", "B"}}},
		{"ref", "ref=A", tagOptions{ref: "A"}},
		{"any", "any", tagOptions{any: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTag(tc.tag)
			if err != nil {
				t.Fatalf("parseTag(%q): %v", tc.tag, err)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(tagOptions{})); d != "" {
				t.Errorf("parseTag(%q) (-want +got):\n%s", tc.tag, d)
			}
		})
	}
}

// TestParseTagRejects: a mistyped tag fails generation rather than silently
// dropping a constraint.
func TestParseTagRejects(t *testing.T) {
	for _, tag := range []string{"requird", "min=abc", "max", "enum=", "pattern", "const", "oneOf=", "required=yes"} {
		if _, err := parseTag(tag); err == nil {
			t.Errorf("parseTag(%q) = nil error, want one", tag)
		}
	}
}

// TestConstrainRejects: a constraint that does not fit the field's type
// fails generation.
func TestConstrainRejects(t *testing.T) {
	type bad struct {
		PatternOnInt  int            `pling:"pattern=^x$"`
		CodesOnInt    int            `pling:"enum=@surface"`
		MinOnMap      map[string]any `pling:"min=1"`
		FractionalLen string         `pling:"max=1.5"`
		RefOnString   string         `pling:"ref=Evidence"`
		NullableConst *string        `pling:"nullable,const=x"`
		ConstOnSlice  []string       `pling:"const=x"`
	}
	ty := reflect.TypeFor[bad]()
	for i := 0; i < ty.NumField(); i++ {
		sf := ty.Field(i)
		if _, _, err := newField(sf, ""); err == nil {
			t.Errorf("%s: newField accepted tag %q", sf.Name, sf.Tag.Get("pling"))
		}
	}
}
