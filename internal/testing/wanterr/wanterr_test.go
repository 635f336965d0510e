package wanterr

import (
	"errors"
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps what Check would fail the test
// with, instead of ending it.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, want  string
		err         error
		wanted      bool
		wantFailure string // "" for none
	}{
		{name: "no error, none wanted"},
		{name: "the wanted error", want: "code after", err: errors.New("line 2: code after"), wanted: true},
		{name: "a wanted error missing", want: "code after", wanted: true,
			wantFailure: `Strip: err = <nil>, want an error with "code after"`},
		{name: "another error than the wanted one", want: "code after", err: errors.New("not closed"), wanted: true,
			wantFailure: `Strip: err = not closed, want an error with "code after"`},
		{name: "an error not wanted", err: errors.New("not closed"),
			wantFailure: "Strip: not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			if got := Check(r, "Strip", tc.err, tc.want); got != tc.wanted {
				t.Errorf("Check = %v, want %v", got, tc.wanted)
			}
			var want []string
			if tc.wantFailure != "" {
				want = []string{tc.wantFailure}
			}
			if fmt.Sprint(r.failures) != fmt.Sprint(want) {
				t.Errorf("failures %q, want %q", r.failures, want)
			}
		})
	}
}
