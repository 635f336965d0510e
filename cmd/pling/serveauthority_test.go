package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestServeAuthorityUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"not a URL", []string{"--authority", "ftp://x"}, "--authority: want a URL or embedded"},
		{"an operator key is no flag of serve", []string{"--authority", "embedded", "--operator-key-file", "k"}, "flag provided but not defined"},
		{"the site's own origin", []string{"--addr", "127.0.0.1:18765", "--authority", "http://127.0.0.1:18765"}, "the site's own origin"},
		{"passkeys are the embedded authority's", []string{"--authority", "http://127.0.0.1:1", "--passkey-origin", "http://localhost:1"}, "configure the embedded authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runServe(t.Context(), append([]string{"--addr", "127.0.0.1:0", "--dist", moduleDir(t)}, tt.args...), &out, &errOut)
			if code != 2 || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Fatalf("exit %d, want 2 with %q:\n%s", code, tt.wantErr, errOut.String())
			}
		})
	}
}

// moduleDir writes fakeModule into a temporary directory, for --dist.
func moduleDir(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	for name, f := range fakeModule() {
		files[name] = string(f.Data)
	}
	return writeTree(t, files)
}

// pling serve --authority embedded is the whole site backend in one
// command: pling delegate asks it, a person approves on its consent
// screen, the token lands in the token directory.
func TestServeEmbeddedAuthority(t *testing.T) {
	srv := startCmd(t, runServe, "--addr", "127.0.0.1:0", "--dist", moduleDir(t), "--authority", "embedded", "--authority-addr", "127.0.0.1:0")
	var auth string
	embedded := regexp.MustCompile(`embedded authority on (\S+),`)
	srv.readUntil(t, func(line string) bool {
		if m := embedded.FindStringSubmatch(line); m != nil {
			auth = m[1]
		}
		return strings.HasPrefix(line, servePrefix)
	})
	site := strings.TrimSuffix(srv.servedURL(t), "/")
	if auth == "" {
		t.Fatalf("no authority address printed; stdout:\n%s\nstderr:\n%s", srv.stdout.String(), srv.stderr.String())
	}
	res, err := http.Get(site + "/shop/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(page, []byte(`data-authority="`+auth+`"`)) {
		t.Errorf("the page does not follow the authority %s:\n%.600s", auth, page)
	}

	dir := t.TempDir()
	t.Setenv(tokenDirEnv, dir)
	lines, delegated, derr := runDelegateAsync(t, site+"/shop/", "--scope", "cart.*", "--authority", auth, "--json")
	if !lines.Scan() {
		t.Fatalf("no pending line; stderr:\n%s", derr)
	}
	link := regexp.MustCompile(`"verificationUriComplete":"([^"]+)"`).FindSubmatch(lines.Bytes())
	if link == nil || !strings.HasPrefix(string(link[1]), auth+"/consent?code=") {
		t.Fatalf("pending line %s", lines.Bytes())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	jar, _ := cookiejar.New(nil)
	person := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = person.Get(string(link[1]))
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	vals := url.Values{"decision": {"approve"}, "scope": {"cart.*"}}
	for _, m := range regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`).FindAllSubmatch(form, -1) {
		vals.Set(string(m[1]), string(m[2]))
	}
	res, err = person.PostForm(auth+"/consent", vals)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(answer, []byte("Approved")) {
		t.Fatalf("approve: HTTP %d\n%s", res.StatusCode, answer)
	}
	if code := <-delegated; code != 0 {
		t.Fatalf("pling delegate exit %d:\n%s", code, derr)
	}
	if st, err := os.Stat(filepath.Join(dir, tokenFileName(site))); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", st, err)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("pling serve exit %d:\n%s", code, srv.stderr.String())
	}
	if strings.Contains(srv.stderr.String(), "pl1.") {
		t.Errorf("a token in the log:\n%s", srv.stderr.String())
	}
}
