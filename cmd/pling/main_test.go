package main

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// TestEveryCommandFlags runs each command with -h and with an unknown
// flag: every command parses its flags through the one shared helper, so
// -h prints "Usage: pling NAME" and exits 0, and a bad flag exits 2.
func TestEveryCommandFlags(t *testing.T) {
	cmds := commands()
	if len(cmds) == 0 {
		t.Fatal("no commands registered")
	}
	for _, c := range cmds {
		t.Run(c.Name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{c.Name, "-h"}, &stdout, &stderr); code != 0 {
				t.Errorf("pling %s -h: exit %d, want 0; stderr: %s", c.Name, code, stderr.String())
			}
			if want := "Usage: pling " + c.Name; !strings.HasPrefix(stderr.String(), want) {
				t.Errorf("pling %s -h: stderr %q, want it to start with %q", c.Name, stderr.String(), want)
			}
			stdout.Reset()
			stderr.Reset()
			if code := run(context.Background(), []string{c.Name, "--no-such-flag"}, &stdout, &stderr); code != 2 {
				t.Errorf("pling %s --no-such-flag: exit %d, want 2", c.Name, code)
			}
			if !strings.Contains(stderr.String(), "no-such-flag") {
				t.Errorf("pling %s --no-such-flag: stderr %q does not name the flag", c.Name, stderr.String())
			}
		})
	}
}

// TestPackageDocListsEveryCommand keeps the package doc in main.go
// current: each registered command has a line "pling NAME …" there.
func TestPackageDocListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no package doc")
	}
	doc := f.Doc.Text()
	for _, c := range commands() {
		if !regexp.MustCompile(`(?m)^\s*pling ` + regexp.QuoteMeta(c.Name) + `\b`).MatchString(doc) {
			t.Errorf("the package doc does not list pling %s", c.Name)
		}
	}
}
