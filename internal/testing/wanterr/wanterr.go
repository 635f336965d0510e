// Package wanterr checks the error of a table test's case against the
// part of its message the case expects, the way the table tests of
// decoders, checkers and file writers each did by hand.
package wanterr

import (
	"strings"
	"testing"
)

// Check checks err, what the call named what returned, against want: a
// part of the message the case expects, or "" for no error. It reports
// whether an error was wanted, so that the case ends there:
//
//	if wanterr.Check(t, "Strip", err, tc.err) {
//		return
//	}
//
// A wanted error that is missing or says something else, and an error
// that was not wanted, end the test.
func Check(t testing.TB, what string, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err = %v, want an error with %q", what, err, want)
		}
		return true
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return false
}
