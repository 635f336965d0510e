package main

import (
	"strings"
	"testing"
)

// cmdCase is one row of a command-line table: the arguments, the exit
// status, and substrings stdout and stderr must contain.
type cmdCase struct {
	name       string
	args       []string
	wantExit   int
	wantOut    []string // substrings of stdout
	wantErrOut []string // substrings of stderr
}

// runCmdCases runs each case as a subtest through checkCmd.
func runCmdCases(t *testing.T, tests []cmdCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCmd(t, tt.args, tt.wantExit, tt.wantOut, tt.wantErrOut)
		})
	}
}

// checkCmd runs the pling command line and fails t unless it exits with
// wantExit and stdout and stderr hold each of wantOut and wantErrOut. It
// returns both outputs for further checks.
func checkCmd(t *testing.T, args []string, wantExit int, wantOut, wantErrOut []string) (out, errOut string) {
	t.Helper()
	code, out, errOut := runCmd(t, args...)
	if code != wantExit {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantExit, out, errOut)
	}
	for _, s := range wantOut {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	for _, s := range wantErrOut {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	return out, errOut
}

// TestNoArgCommandsRefuseArguments: a command without positional
// arguments refuses one (parseNoArgs) before it starts anything, naming
// itself.
func TestNoArgCommandsRefuseArguments(t *testing.T) {
	var cases []cmdCase
	for _, name := range []string{"authority", "demo", "gateway", "serve", "session stop", "version"} {
		args := append(strings.Fields(name), "extra")
		cases = append(cases, cmdCase{name: name, args: args, wantExit: 2,
			wantErrOut: []string{"pling " + name + `: unexpected arguments ["extra"]`}})
	}
	runCmdCases(t, cases)
}
