package main

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// The session token reaches describe, invoke and mcp from --session, a
// file (--session-file, not readable by others) or $PLING_SESSION, so it
// need not be on the command line, where the process list shows it.
func TestSessionSources(t *testing.T) {
	_, sess := fixtureTargets(t)
	dir := t.TempDir()
	file := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	good := file("good", "tok_a\n", 0o600)
	bad := file("bad", "nope\n", 0o600)
	open := file("open", "tok_a\n", 0o644)
	empty := file("empty", " \n", 0o600)
	huge := file("huge", strings.Repeat("x", 9000), 0o600)
	tests := []struct {
		name     string
		env      string
		args     []string
		wantExit int
		wantOut  string // in stdout
		wantErr  string // in stderr
	}{
		{name: "describe, token in a file", args: []string{"describe", sess, "--session-file", good}, wantOut: "cart.add"},
		{name: "describe, token in the environment", env: "tok_a", args: []string{"describe", sess}, wantOut: "cart.add"},
		{name: "invoke, token in a file", args: []string{"invoke", sess, "cart.add", "--session-file", good}, wantOut: "1"},
		{name: "invoke, token in the environment", env: "tok_a", args: []string{"invoke", sess, "cart.add"}, wantOut: "1"},
		{name: "mcp, token in a file", args: []string{"mcp", "--fixture", writeFixture(t, "s.json", sessionFixture), "--session-file", bad}, wantExit: 1, wantErr: "SESSION_INVALID"},
		{name: "--session wins over the environment", env: "nope", args: []string{"describe", sess, "--session", "tok_a"}, wantOut: "cart.add"},
		{name: "--session-file wins over the environment", env: "nope", args: []string{"describe", sess, "--session-file", good}, wantOut: "cart.add"},
		{name: "the environment is used when no flag is", env: "nope", args: []string{"describe", sess}, wantExit: 1, wantErr: "SESSION_INVALID"},
		{name: "--session and --session-file together", args: []string{"describe", sess, "--session", "tok_a", "--session-file", good}, wantExit: 2, wantErr: "not both"},
		{name: "a file others can read is refused", args: []string{"describe", sess, "--session-file", open}, wantExit: 2, wantErr: "chmod 600"},
		{name: "an empty file", args: []string{"describe", sess, "--session-file", empty}, wantExit: 2, wantErr: "is empty"},
		{name: "a file too long for a token", args: []string{"describe", sess, "--session-file", huge}, wantExit: 2, wantErr: "longer than"},
		{name: "a missing file", args: []string{"describe", sess, "--session-file", filepath.Join(dir, "none")}, wantExit: 2, wantErr: "session file"},
		{name: "usage names the sources", args: []string{"invoke", "--help"}, wantErr: "PLING_SESSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PLING_SESSION", tt.env)
			out, errOut := checkCmd(t, tt.args, tt.wantExit, []string{tt.wantOut}, []string{tt.wantErr})
			if strings.Contains(errOut, "tok_a") || strings.Contains(out, "tok_a") {
				t.Errorf("the token is printed:\n%s\n%s", out, errOut)
			}
		})
	}
}

// TestOpenNoFollowRefusesALink: the open itself refuses a symbolic link,
// so a link swapped in between readSessionFile's Lstat check and its
// open is not followed to a file someone else chose.
func TestOpenNoFollowRefusesALink(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("no O_NOFOLLOW")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "theirs.token")
	if err := os.WriteFile(target, []byte("pl1.someone.else"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mine.token")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := openNoFollow(link); err == nil {
		f.Close()
		t.Fatal("openNoFollow followed a symbolic link")
	}
	f, err := openNoFollow(target)
	if err != nil {
		t.Fatalf("openNoFollow of a regular file: %v", err)
	}
	f.Close()
}
