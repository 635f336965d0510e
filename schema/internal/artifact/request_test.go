package artifact_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pling-go/pling/schema/internal/artifact"
)

type (
	reqTarget struct {
		Session    string
		HasSession bool
		Options    struct{ MaxRecords *int }
	}
	reqPing struct {
		Protocol string `json:"protocol"`
		ID       string `json:"id"`
		Method   string `json:"method" pling:"const=ping"`
		Session  string `json:"session,omitempty" pling:"max=8"`
	}
	reqNoField struct {
		Protocol string `json:"protocol"`
		Method   string `json:"method" pling:"const=ping"`
		Extra    string `json:"extra,omitempty"`
	}
	reqBadType struct {
		Method  string `json:"method" pling:"const=ping"`
		Session int    `json:"session,omitempty"`
	}
	reqNoMethod struct {
		Session string `json:"session,omitempty"`
	}
	reqNested struct {
		Method  string     `json:"method" pling:"const=ping"`
		Options *reqNestOp `json:"options,omitempty"`
	}
	reqNestOp struct {
		MaxRecords *int `json:"maxRecords,omitempty" pling:"min=0"`
	}
)

// TestRequestDecoderOf: a request member is read by the generated decoder
// or generation fails and says why; it is never left unread.
func TestRequestDecoderOf(t *testing.T) {
	target := reflect.TypeFor[reqTarget]()
	src, err := artifact.RequestDecoderOf("x", target, []reflect.Type{reflect.TypeFor[reqPing]()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`var pingMembers = []string{"protocol", "id", "method", "session"}`,
		`return "session", "session must be at most 8 bytes"`,
		"req.HasSession = true",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the generated decoder lacks %q:\n%s", want, src)
		}
	}
	wantRefusals(t, "RequestDecoderOf", func(pkg string, roots []reflect.Type) ([]byte, error) {
		return artifact.RequestDecoderOf(pkg, target, roots)
	}, []refusal{
		{"member without a field", reflect.TypeFor[reqNoField](), "has no field Extra"},
		{"member of another type", reflect.TypeFor[reqBadType](), "is not supported in a request"},
		{"no method", reflect.TypeFor[reqNoMethod](), "no method member"},
		{"nested bound missing", reflect.TypeFor[reqNested](), "only an optional *int with min and max"},
	})
}
