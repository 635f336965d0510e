package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/pgtest"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// authorityProc is `pling authority` as a process of its own (this test
// binary run as pling), so that a test can SIGKILL it: the harness of the
// crash tests of instances sharing a PostgreSQL store.
type authorityProc struct {
	t      *testing.T
	URL    string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan struct{}
}

// startAuthorityProc starts pling authority on store with the operator
// key opKey, waits for its address, and stops it (SIGTERM) at the end of
// the test if it still runs.
func startAuthorityProc(t *testing.T, store, opKey string, args ...string) *authorityProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"authority", "--addr", "127.0.0.1:0", "--store", store,
		"--audience", "https://shop.example=orders.*"}, args...)...)
	cmd.Env = append(os.Environ(), asPlingEnv+"=1", "PLING_OPERATOR_KEYS="+opKey, kekEnv+"="+testKEK)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &authorityProc{t: t, cmd: cmd, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
	}()
	select {
	case line := <-lines:
		if p.URL = regexp.MustCompile(`http://\S+`).FindString(line); p.URL == "" {
			t.Fatalf("pling authority printed %q; stderr %s", line, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("pling authority did not start; stderr %s", p.stderr.String())
	}
	return p
}

// Kill SIGKILLs the process and waits until it is gone.
func (p *authorityProc) Kill() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.t.Fatal("pling authority survived SIGKILL")
	}
}

func (p *authorityProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *authorityProc) call(method, path, auth, body string) (int, map[string]any, error) {
	req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m, nil
}

func (p *authorityProc) must(method, path, auth, body string, want int) map[string]any {
	p.t.Helper()
	st, b, err := p.call(method, path, auth, body)
	if err != nil || st != want {
		p.t.Fatalf("%s %s: %d %v %v, want %d", method, path, st, b, err, want)
	}
	return b
}

// An instance SIGKILLed in the middle of the grant (with a long-poll
// open) loses nothing: another instance on the same PostgreSQL collects
// the token it approved, and a restarted instance publishes the key that
// signed it and serves the revocation made meanwhile.
func TestAuthorityInstanceSIGKILL(t *testing.T) {
	dsn := pgtest.DSN(t)
	const op = "op-secret-kill"
	a := startAuthorityProc(t, dsn, op)
	b := startAuthorityProc(t, dsn, op)

	cr := a.must("POST", "/v1/delegations", "", `{"audience":"https://shop.example","scope":["orders.read"],"ttlSeconds":60,"agent":"a"}`, 201)
	id, secret := cr["id"].(string), cr["pollSecret"].(string)
	a.must("POST", "/v1/delegations/"+id+"/approve", op, `{"subject":"alice"}`, 200)

	poll := make(chan error, 1)
	go func() { _, _, err := a.call("GET", "/v1/revocations?after=0&waitSeconds=30", "", ""); poll <- err }()
	time.Sleep(200 * time.Millisecond)
	a.Kill()
	select {
	case err := <-poll:
		if err == nil {
			t.Error("the long-poll on the killed instance answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long-poll on the killed instance hangs")
	}

	b.must("GET", "/readyz", "", "", 200)
	tk := b.must("POST", "/v1/delegations/"+id+"/token", "", `{"pollSecret":"`+secret+`"}`, 200)
	tok, sid := tk["token"].(string), tk["sessionId"].(string)
	b.must("POST", "/v1/sessions/"+sid+"/revoke", op, "", 200)

	c := startAuthorityProc(t, dsn, op) // a restart after the crash
	kid := strings.Split(tok, ".")[1]
	keys := c.must("GET", "/v1/keys", "", "", 200)
	found := false
	for _, k := range keys["keys"].([]any) {
		found = found || k.(map[string]any)["kid"] == kid
	}
	if !found {
		t.Errorf("the restarted instance does not publish kid %s: %v", kid, keys)
	}
	feed := c.must("GET", "/v1/revocations?after=0", "", "", 200)
	if rv := feed["revoked"].([]any); len(rv) != 1 || rv[0].(map[string]any)["sessionId"] != sid {
		t.Errorf("the restarted instance's feed: %v", feed)
	}
}

// testKEK is the key-encryption key every test authority process of one
// store shares.
const testKEK = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
