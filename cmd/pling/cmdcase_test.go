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

// TestUsageErrorsPrintTheUsage: a command given the wrong arguments says
// what is wrong under its name, then its usage (usageError), and exits 2.
func TestUsageErrorsPrintTheUsage(t *testing.T) {
	runCmdCases(t, []cmdCase{
		{name: "check without a URL", args: []string{"check"}, wantExit: 2,
			wantErrOut: []string{"pling check: want one page URL (http:// or https://)\nUsage: pling check URL"}},
		{name: "check with a file", args: []string{"check", "page.html"}, wantExit: 2, wantErrOut: []string{"pling check: want one page URL"}},
		{name: "session start with no page URL", args: []string{"session", "start", "ftp://x"}, wantExit: 2,
			wantErrOut: []string{"pling session start: give one page URL\nUsage: pling session start"}},
		{name: "describe with two targets", args: []string{"describe", "fixture:a", "fixture:b"}, wantExit: 2,
			wantErrOut: []string{"pling describe: want one TARGET, got 2 arguments\nUsage: pling describe"}},
		{name: "invoke without a capability", args: []string{"invoke", "fixture:a"}, wantExit: 2,
			wantErrOut: []string{"pling invoke: want TARGET and CAPABILITY, got 1 arguments\nUsage: pling invoke"}},
		{name: "mcp without a page", args: []string{"mcp"}, wantExit: 2,
			wantErrOut: []string{"pling mcp: give one page: --fixture PATH, TARGET or --session-name NAME\nUsage: pling mcp"}},
	})
}
