package errors

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/pling-go/pling/internal/testing/hammer"
)

// TestHammer releases many goroutines together against the shared registry,
// the error constructors and the renderers; run it with -race.
func TestHammer(t *testing.T) {
	codes := allCodes()
	details := map[string]any{
		"authorization": "Bearer abcdefghijklmnop",
		"headers":       []any{map[string]any{"name": "Cookie", "value": "sid=1"}},
		"n":             1,
	}
	type result struct {
		canonical Code
		entry     Entry
		wire      string
		status    int
		body      string
	}
	compute := func(c Code) result {
		e := New(c, "", details)
		wire, _ := json.Marshal(e)
		status, body := RenderGateway(e)
		entry, _ := Lookup(c)
		return result{Canonical(c), entry, string(wire), status, string(body)}
	}
	want := make(map[Code]result, len(codes))
	for _, c := range codes {
		want[c] = compute(c)
	}

	n := 4 * runtime.GOMAXPROCS(0)
	if n < 16 {
		n = 16
	}
	errs := make(chan string, n)
	hammer.Run(n, func(g int) {
		for i := range 200 {
			c := codes[(g+i)%len(codes)]
			if got := compute(c); got != want[c] {
				errs <- string(c)
				return
			}
			if p, known := ParseCode(string(c)); p != c || !known {
				errs <- "ParseCode " + string(c)
				return
			}
			_ = Codes(want[c].entry.Namespace)
			_ = Aliases()
		}
	})
	close(errs)
	for c := range errs {
		t.Errorf("concurrent use gave a different result for %s", c)
	}
}
