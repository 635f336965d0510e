package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/wanterr"
)

const testOpKey = "operator-key-for-cmd-tests"

// startAuthority runs a real authority on loopback issuing for
// http://127.0.0.1:8080 with scope cart.* and orders.*.
func startAuthority(t *testing.T) string {
	t.Helper()
	return authoritytest.Start(t, authority.Config{Audiences: map[string][]string{"http://127.0.0.1:8080": {"cart.*", "orders.*"}},
		OperatorKeys: []string{testOpKey}, VerificationURI: "http://127.0.0.1:8080/pling/consent", Interval: time.Second}, nil).URL
}

func TestDelegateUsage(t *testing.T) {
	t.Setenv(authorityEnv, "")
	t.Setenv(tokenDirEnv, t.TempDir())
	runCmdCases(t, []cmdCase{
		{name: "no URL", args: []string{"delegate", "--scope", "cart.*", "--authority", "http://127.0.0.1:1"}, wantExit: 2, wantErrOut: []string{"want one page URL"}},
		{name: "two URLs", args: []string{"delegate", "http://a.example/", "http://b.example/", "--scope", "x", "--authority", "http://127.0.0.1:1"}, wantExit: 2, wantErrOut: []string{"want one page URL"}},
		{name: "not a page URL", args: []string{"delegate", "fixture:x.json", "--scope", "x", "--authority", "http://127.0.0.1:1"}, wantExit: 2, wantErrOut: []string{"not an http(s) page URL"}},
		{name: "no scope", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--authority", "http://127.0.0.1:1"}, wantExit: 2, wantErrOut: []string{"--scope is required"}},
		{name: "empty scope", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--scope", " , ", "--authority", "http://127.0.0.1:1"}, wantExit: 2, wantErrOut: []string{"--scope is required"}},
		{name: "no authority", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--scope", "cart.*"}, wantExit: 2, wantErrOut: []string{"no authority: give --authority URL"}},
		{name: "bad authority", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--scope", "cart.*", "--authority", "ftp://x"}, wantExit: 2, wantErrOut: []string{"--authority:"}},
		{name: "ttl too short", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--scope", "cart.*", "--authority", "http://127.0.0.1:1", "--ttl", "10ms"}, wantExit: 2, wantErrOut: []string{"--ttl must be at least 1s"}},
		{name: "empty agent", args: []string{"delegate", "http://127.0.0.1:8080/shop/", "--scope", "cart.*", "--authority", "http://127.0.0.1:1", "--agent", " "}, wantExit: 2, wantErrOut: []string{"--agent must not be empty"}},
		{name: "bad flag", args: []string{"delegate", "--nope"}, wantExit: 2, wantErrOut: []string{"flag provided but not defined"}},
	})
}

// pipeWriter is stdout for a command running in a goroutine: the test
// reads its JSON lines as they come.
func runDelegateAsync(t *testing.T, args ...string) (lines *bufio.Scanner, done <-chan int, stderr *bytes.Buffer) {
	t.Helper()
	pr, pw := io.Pipe()
	ch := make(chan int, 1)
	stderr = new(bytes.Buffer)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	go func() {
		code := run(ctx, append([]string{"delegate"}, args...), pw, stderr)
		pw.Close()
		ch <- code
	}()
	return bufio.NewScanner(pr), ch, stderr
}

// operatorCall posts body to path as the operator, who must be answered
// 200.
func operatorCall(t *testing.T, base, path string, body any) {
	t.Helper()
	if code, b := authoritytest.Call(t, base, "POST", path, testOpKey, body); code != 200 {
		t.Fatalf("%s: HTTP %d %v", path, code, b)
	}
}

// A run of pling delegate against a real authority: the person approves
// (here the test, with the operator key) a narrowed scope; the token is
// stored 0600 where invoke finds it, and printed nowhere.
func TestDelegateApproved(t *testing.T) {
	base := startAuthority(t)
	dir := t.TempDir()
	t.Setenv(tokenDirEnv, dir)
	lines, done, stderr := runDelegateAsync(t, "http://127.0.0.1:8080/shop/?x=1", "--scope", "cart.*,orders.*",
		"--authority", base, "--agent", "test <agent>", "--json")
	if !lines.Scan() {
		t.Fatalf("no first line; stderr:\n%s", stderr)
	}
	var pending struct{ ID, UserCode, VerificationURIComplete string }
	if err := json.Unmarshal(lines.Bytes(), &pending); err != nil || pending.ID == "" {
		t.Fatalf("first line %s: %v", lines.Bytes(), err)
	}
	if want := "http://127.0.0.1:8080/pling/consent?code=" + pending.UserCode; pending.VerificationURIComplete != want {
		t.Errorf("verificationUriComplete %q, want %q", pending.VerificationURIComplete, want)
	}
	operatorCall(t, base, "/v1/delegations/"+pending.ID+"/approve", map[string]any{"subject": "alice", "scope": []string{"cart.*"}})
	if !lines.Scan() {
		t.Fatalf("no second line; stderr:\n%s", stderr)
	}
	var session struct {
		SessionID string
		Scope     []string
		TokenFile string
		Token     string
	}
	_ = json.Unmarshal(lines.Bytes(), &session)
	for lines.Scan() {
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := filepath.Join(dir, "http_127.0.0.1%3A8080.token")
	if diff := cmp.Diff([]string{"cart.*"}, session.Scope); diff != "" || session.TokenFile != want || session.Token != "" {
		t.Errorf("session %+v (scope -want +got %s), want file %s and no token", session, diff, want)
	}
	st, err := os.Lstat(want)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Errorf("token file mode %v, want -rw-------", st.Mode())
	}
	tok, _ := os.ReadFile(want)
	if !strings.HasPrefix(string(tok), "pl1.") || strings.Contains(stderr.String(), strings.TrimSpace(string(tok))) {
		t.Errorf("token file %q; stderr:\n%s", tok, stderr)
	}
	if !strings.Contains(stderr.String(), pending.UserCode) || !strings.Contains(stderr.String(), "test <agent> asks for cart.*, orders.*") {
		t.Errorf("stderr lacks the code or the request:\n%s", stderr)
	}

	// describe, invoke and mcp find the stored token for the origin.
	sf := sessionFlags{token: new(string), file: new(string), tokenFile: new(string)}
	got, stored, err := sf.resolve(func(string) string { return "" }, "http://127.0.0.1:8080/orders/")
	if err != nil || stored != want || got != strings.TrimSpace(string(tok)) {
		t.Errorf("resolve: stored %q err %v, token found: %v", stored, err, got == strings.TrimSpace(string(tok)))
	}
}

func TestDelegateDenied(t *testing.T) {
	base := startAuthority(t)
	dir := t.TempDir()
	t.Setenv(tokenDirEnv, dir)
	lines, done, stderr := runDelegateAsync(t, "http://127.0.0.1:8080/shop/", "--scope", "cart.*", "--authority", base, "--json")
	if !lines.Scan() {
		t.Fatalf("no first line; stderr:\n%s", stderr)
	}
	var pending struct{ ID string }
	_ = json.Unmarshal(lines.Bytes(), &pending)
	operatorCall(t, base, "/v1/delegations/"+pending.ID+"/deny", nil)
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if code := <-done; code != 1 || !strings.Contains(stderr.String(), "denied (DELEGATION_REVOKED)") || !strings.Contains(last, `"DELEGATION_REVOKED"`) {
		t.Fatalf("exit %d, last line %s; stderr:\n%s", code, last, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a denial stored something: %v", entries)
	}
}

// writeTokenFile replaces a private regular file and nothing else.
func TestWriteTokenFile(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("old\n"), mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(p, mode)
		return p
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(mk("target", 0o600), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, wantErr string
	}{
		{"new file in a new directory", filepath.Join(dir, "sub", "new.token"), ""},
		{"a private file is replaced", mk("private", 0o600), ""},
		{"a file others may read is kept", mk("open", 0o644), "open to group or others"},
		{"a symbolic link is kept", link, "symbolic link"},
		{"a directory is kept", dir, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := writeTokenFile(tt.path, "pl1.tok")
			if wanterr.Check(t, "writeTokenFile", err, tt.wantErr) {
				return
			}
			st, _ := os.Lstat(tt.path)
			b, _ := os.ReadFile(tt.path)
			if st.Mode().Perm() != 0o600 || string(b) != "pl1.tok\n" {
				t.Errorf("mode %v, content %q", st.Mode(), b)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "target")); string(b) != "old\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// The stored token is found by origin, and refused like any token file
// when others may read it; --token-file is --session-file's other name.
func TestSessionStoredAndTokenFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(tokenDirEnv, dir)
	stored := filepath.Join(dir, "http_127.0.0.1%3A8080.token")
	other := filepath.Join(dir, "https_shop.example.token")
	named := filepath.Join(dir, "named")
	for p, mode := range map[string]os.FileMode{stored: 0o600, other: 0o640, named: 0o600} {
		if err := os.WriteFile(p, []byte("tok_"+filepath.Base(p)+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(p, mode)
	}
	type got struct{ Token, Stored, Err string }
	tests := []struct {
		name                   string
		session, file, tokFile string
		env, target            string
		want                   got
	}{
		{name: "stored for the origin", target: "http://127.0.0.1:8080/shop/", want: got{Token: "tok_http_127.0.0.1%3A8080.token", Stored: stored}},
		{name: "default port dropped", target: "https://SHOP.example:443/x", want: got{Stored: other, Err: "open to group or others"}},
		{name: "nothing stored for the origin", target: "http://127.0.0.1:9999/", want: got{}},
		{name: "a fixture has no origin", target: "fixture:x.json", want: got{}},
		{name: "the environment wins over the stored", env: "tok_env", target: "http://127.0.0.1:8080/", want: got{Token: "tok_env"}},
		{name: "--token-file", tokFile: named, target: "http://127.0.0.1:8080/", want: got{Token: "tok_named"}},
		{name: "--token-file and --session-file", tokFile: named, file: named, want: got{Err: "not both"}},
		{name: "--token-file and --session", tokFile: named, session: "x", want: got{Err: "not both"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sf := sessionFlags{token: &tt.session, file: &tt.file, tokenFile: &tt.tokFile}
			tok, st, err := sf.resolve(func(string) string { return tt.env }, tt.target)
			g := got{Token: tok, Stored: st}
			if err != nil {
				g.Err = err.Error()
				if strings.Contains(g.Err, tt.want.Err) {
					g.Err = tt.want.Err
				}
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// "pling authority & pling delegate …" in one script: the authority may
// not listen yet when pling delegate first asks; it tries again for a
// few seconds.
func TestDelegateWaitsForAStartingAuthority(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens until the authority starts below
	t.Setenv(tokenDirEnv, t.TempDir())
	lines, done, stderr := runDelegateAsync(t, "http://127.0.0.1:8080/shop/", "--scope", "cart.*", "--authority", "http://"+addr, "--json")
	time.Sleep(500 * time.Millisecond) // the authority is slow to start
	st, err := authority.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := authority.NewServer(t.Context(), authority.Config{Store: st,
		Audiences: map[string][]string{"http://127.0.0.1:8080": {"*"}}, OperatorKeys: []string{testOpKey}, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	if !lines.Scan() {
		t.Fatalf("no pending line; stderr:\n%s", stderr)
	}
	var pending struct{ ID string }
	_ = json.Unmarshal(lines.Bytes(), &pending)
	operatorCall(t, "http://"+addr, "/v1/delegations/"+pending.ID+"/approve", map[string]any{"subject": "alice"})
	for lines.Scan() {
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}
