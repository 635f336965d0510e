package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestServeEmbeddedAuthorityPasskeys: the pling binary's serve --authority
// embedded takes pling authority's passkey flags: with --passkey-origin
// the embedded authority keeps passkeys (its /passkeys screen is served;
// without the flag it says it keeps none), and
// --passkey-approvals reaches its configuration (an audience it does not
// issue for is refused at start, as pling authority refuses it). The
// flags are refused with an authority at a URL, which is configured
// where it runs.
func TestServeEmbeddedAuthorityPasskeys(t *testing.T) {
	bin := buildPling(t)
	dist := moduleDir(t)
	type run struct {
		site, auth int
		stdout     *bufio.Scanner
		stderr     *syncbuf.Buffer
		done       chan int
	}
	start := func(t *testing.T, passkeys func(site, auth int) []string) *run {
		t.Helper()
		r := &run{site: freePort(t), auth: freePort(t), stderr: &syncbuf.Buffer{}, done: make(chan int, 1)}
		args := []string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(r.site), "--dist", dist, "--authority", "embedded",
			"--authority-addr", "127.0.0.1:" + strconv.Itoa(r.auth)}
		cmd := exec.CommandContext(t.Context(), bin, append(args, passkeys(r.site, r.auth)...)...)
		cmd.Stderr = r.stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.stdout = bufio.NewScanner(out)
		go func() {
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			r.done <- code
		}()
		return r
	}
	// served waits for the site's line; false when the command ended.
	served := func(r *run) bool {
		for r.stdout.Scan() {
			if strings.HasPrefix(r.stdout.Text(), servePrefix) {
				go func() {
					for r.stdout.Scan() { // the rest of stdout, so the child never blocks on it
					}
				}()
				return true
			}
		}
		return false
	}
	// keepsPasskeys is whether the embedded authority's /passkeys screen
	// serves passkeys, and what it answered.
	keepsPasskeys := func(t *testing.T, r *run) (bool, string) {
		t.Helper()
		c := &http.Client{Timeout: 10 * time.Second}
		res, err := c.Get("http://localhost:" + strconv.Itoa(r.auth) + "/passkeys")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		answer := res.Status + " " + string(b)
		return res.StatusCode != http.StatusNotFound && !strings.Contains(string(b), "keeps no passkeys"), answer
	}

	t.Run("on", func(t *testing.T) {
		r := start(t, func(site, auth int) []string {
			return []string{"--passkey-origin", "http://localhost:" + strconv.Itoa(auth),
				"--passkey-approvals", "http://127.0.0.1:" + strconv.Itoa(site) + "=refund@*"}
		})
		if !served(r) {
			t.Fatalf("pling serve exited %d:\n%s", <-r.done, r.stderr.String())
		}
		if on, answer := keepsPasskeys(t, r); !on {
			t.Errorf("GET /passkeys of the embedded authority with --passkey-origin keeps no passkeys: %.300s", answer)
		}
	})
	t.Run("off", func(t *testing.T) {
		r := start(t, func(int, int) []string { return nil })
		if !served(r) {
			t.Fatalf("pling serve exited %d:\n%s", <-r.done, r.stderr.String())
		}
		if on, answer := keepsPasskeys(t, r); on {
			t.Errorf("GET /passkeys of the embedded authority without --passkey-origin serves passkeys: %.300s", answer)
		}
	})
	for _, tc := range []struct {
		name     string
		passkeys func(site, auth int) []string
		code     int
		want     string
	}{
		{"approvals for no audience", func(_, auth int) []string {
			return []string{"--passkey-origin", "http://localhost:" + strconv.Itoa(auth), "--passkey-approvals", "https://other.example=refund@*"}
		}, 1, "which is no audience"},
		{"approvals without the origin", func(site, _ int) []string {
			return []string{"--passkey-approvals", "http://127.0.0.1:" + strconv.Itoa(site) + "=refund@*"}
		}, 1, "need Passkeys.Origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, tc.passkeys)
			if served(r) {
				t.Fatalf("pling serve started; stderr:\n%s", r.stderr.String())
			}
			if code := <-r.done; code != tc.code || !strings.Contains(r.stderr.String(), tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, r.stderr.String())
			}
		})
	}
}
