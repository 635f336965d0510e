package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/internal/testing/pgtest"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// TestAuthorityRestoreDrill is the operator's restore drill, on each
// store, with `pling authority restore` run as a process: a gateway and a
// page-side follower keep running across it, behind a balancer that is
// switched to the instance on the restored store. After the restore, a
// session revoked after the backup, a token issued between the backup
// and the restore, and a session revoked after the restore are refused
// at the authority, at the running gateway, at the running follower and
// at a gateway started afterwards, within the feed's freshness bound; a
// token issued after the restore is accepted everywhere, and a task
// written before the backup is there.
func TestAuthorityRestoreDrill(t *testing.T) {
	for _, tc := range []struct {
		name string
		// store gives the live store's spec and a restore: it backs the
		// store up, then (called later) restores the backup and returns
		// the store spec to start on and the restore command's flags.
		store func(t *testing.T) (spec string, backup func() (restore func() (string, []string)))
	}{
		{"sqlite", func(t *testing.T) (string, func() func() (string, []string)) {
			dir := t.TempDir()
			live := filepath.Join(dir, "pling.db")
			return "sqlite:" + live, func() func() (string, []string) {
				db, err := sql.Open("sqlite", "file:"+live+"?_pragma=busy_timeout(5000)")
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				copyPath := filepath.Join(dir, "backup.db")
				if _, err := db.Exec(`VACUUM INTO ?`, copyPath); err != nil {
					t.Fatal(err)
				}
				return func() (string, []string) {
					return "sqlite:" + live, []string{"--store", "sqlite:" + live, "--from", copyPath}
				}
			}
		}},
		{"postgres", func(t *testing.T) (string, func() func() (string, []string)) {
			src := pgtest.DSN(t)
			bin, err := pgtest.Binaries()
			if err != nil {
				t.Skip(err)
			}
			return src, func() func() (string, []string) {
				dump := filepath.Join(t.TempDir(), "pling.dump")
				if out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--format=custom", "--file="+dump, "--dbname="+src).CombinedOutput(); err != nil {
					t.Fatalf("pg_dump: %v %s", err, out)
				}
				return func() (string, []string) {
					dst := pgtest.DSN(t)
					if out, err := exec.Command(filepath.Join(bin, "pg_restore"), "--no-owner", "--dbname="+dst, dump).CombinedOutput(); err != nil {
						t.Fatalf("pg_restore: %v %s", err, out)
					}
					return dst, []string{"--store", dst}
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, backup := tc.store(t)
			restoreDrill(t, spec, backup)
		})
	}
}

const drillOrigin = "https://shop.example"

func restoreDrill(t *testing.T, spec string, backup func() func() (string, []string)) {
	const op = "op-secret-restore"
	audArgs := []string{"--audience", drillOrigin + "=gateway:*"}
	a := startAuthorityProc(t, spec, op, audArgs...)
	lb := newSwitchProxy(t, a.URL)
	up, _ := gatewayRig(t, func(scripted.Request) scripted.Reply { return scripted.Reply{Content: "ok"} })
	gwArgs := []string{"--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1", "--authority", lb.URL, "--audience", drillOrigin}
	gw := startCmd(t, runGateway, gwArgs...)
	gwURL := gw.url(t)
	page, err := follow.New(lb.URL, drillOrigin)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	<-page.Ready()

	// Before the backup: two sessions, and a task written (acknowledged).
	revokedAfterBackup, sidRAB := drillGrant(t, lb.URL, op)
	kept, _ := drillGrant(t, lb.URL, op)
	taskID := "drill-task"
	if st, body := drillCall(t, "POST", lb.URL+"/v1/tasks", kept, `{"taskId":"`+taskID+`","state":{"step":1}}`); st != 201 {
		t.Fatalf("create task: %d %s", st, body)
	}
	restore := backup()

	// Between the backup and the restore.
	drillCall(t, "POST", lb.URL+"/v1/sessions/"+sidRAB+"/revoke", op, "")
	issuedBetween, _ := drillGrant(t, lb.URL, op)
	waitFor(t, "the running gateway accepts the token issued before the restore", 10*time.Second, func() bool { return gwChat(t, gwURL, issuedBetween) == 200 })

	// The restore: stop the instance, restore, start on the restored
	// store, switch the balancer.
	a.stop()
	restoredSpec, flags := restore()
	out, err := runPlingProc(t, append([]string{"authority", "restore"}, flags...)...)
	if err != nil {
		t.Fatalf("pling authority restore: %v\n%s", err, out)
	}
	if !strings.Contains(out, "restored: epoch") {
		t.Fatalf("pling authority restore printed %q", out)
	}
	b := startAuthorityProc(t, restoredSpec, op, audArgs...)
	lb.target.Store(mustURL(t, b.URL))
	restoredAt := time.Now()

	fresh, _ := drillGrant(t, lb.URL, op)
	revokedAfterRestore, sidRAR := drillGrant(t, lb.URL, op)
	drillCall(t, "POST", lb.URL+"/v1/sessions/"+sidRAR+"/revoke", op, "")

	refused := map[string]string{"revoked after the backup": revokedAfterBackup, "issued between backup and restore": issuedBetween,
		"revoked after the restore": revokedAfterRestore, "issued before the backup, not revoked": kept}
	// The freshness bound of a follower with the default wait, and a
	// little for the gateway's start.
	bound := time.Duration(follow.DefaultWaitSeconds)*time.Second + follow.DefaultFreshGraceMs*time.Millisecond
	// First current again (a fresh token accepted), so that a refusal
	// below is the restore's doing, not a follower that is not current.
	waitFor(t, "the running gateway accepts a token issued after the restore", bound, func() bool { return gwChat(t, gwURL, fresh) == 200 })
	waitFor(t, "the running follower accepts a token issued after the restore", bound, func() bool {
		_, err := page.Verify(context.Background(), fresh, time.Now().UnixMilli())
		return err == nil
	})
	for name, tok := range refused {
		// (A revocation reaches a current follower within a long-poll's
		// answer, not at once.)
		waitFor(t, "the running gateway refuses the token "+name, bound, func() bool { return gwChat(t, gwURL, tok) == 401 })
		waitFor(t, "the running follower refuses the token "+name, bound, func() bool {
			_, err := page.Verify(context.Background(), tok, time.Now().UnixMilli())
			return err != nil
		})
		if st, body := drillCall(t, "GET", lb.URL+"/v1/tasks/"+taskID, tok, ""); st != 401 {
			t.Errorf("the authority answers the token %s with %d %s, want 401", name, st, body)
		}
	}
	// Current still (a fresh token accepted again), and every one of
	// them refused at that moment: refused for what it is.
	waitFor(t, "the running gateway accepts a token issued after the restore", bound, func() bool { return gwChat(t, gwURL, fresh) == 200 })
	waitFor(t, "the running follower accepts a token issued after the restore", bound, func() bool {
		_, err := page.Verify(context.Background(), fresh, time.Now().UnixMilli())
		return err == nil
	})
	for name, tok := range refused {
		if st := gwChat(t, gwURL, tok); st != 401 {
			t.Errorf("the running gateway answers the token %s with %d, want 401", name, st)
		}
		if _, err := page.Verify(context.Background(), tok, time.Now().UnixMilli()); err == nil {
			t.Errorf("the running follower accepts the token %s", name)
		}
	}
	t.Logf("the running gateway and follower were current with the restored store %v after it served", time.Since(restoredAt).Round(time.Millisecond))

	gw2 := startCmd(t, runGateway, gwArgs...)
	gw2URL := gw2.url(t)
	waitFor(t, "a gateway started after the restore accepts a token issued after it", bound, func() bool { return gwChat(t, gw2URL, fresh) == 200 })
	for name, tok := range refused {
		if st := gwChat(t, gw2URL, tok); st != 401 {
			t.Errorf("a gateway started after the restore answers the token %s with %d, want 401", name, st)
		}
	}
	// What was acknowledged before the backup is there.
	if st, body := drillCall(t, "GET", lb.URL+"/v1/tasks/"+taskID, fresh, ""); st != 200 || !strings.Contains(body, `"step":1`) {
		t.Errorf("the task written before the backup: %d %s", st, body)
	}
}

// switchProxy is a load balancer in front of the authority whose
// backend can be switched (the restored instance replaces the old).
type switchProxy struct {
	URL    string
	target atomic.Pointer[url.URL]
}

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	p := &switchProxy{}
	p.target.Store(mustURL(t, target))
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(p.target.Load())
		r.SetXForwarded()
	}, ErrorLog: nil}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) }
	hs := httptest.NewServer(rp)
	t.Cleanup(hs.Close)
	p.URL = hs.URL
	return p
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// drillGrant runs the device grant for a token that may call the
// gateway and write tasks, and returns it with its session id.
func drillGrant(t *testing.T, base, op string) (token, sessionID string) {
	t.Helper()
	var cr, tk struct {
		ID, PollSecret, Token, SessionID string
	}
	st, body := drillCall(t, "POST", base+"/v1/delegations", "", `{"audience":"`+drillOrigin+`","scope":["gateway:chat"],"ttlSeconds":3600,"agent":"drill"}`)
	if st != 201 || jsonInto(body, &cr) != nil {
		t.Fatalf("delegation: %d %s", st, body)
	}
	if st, body := drillCall(t, "POST", base+"/v1/delegations/"+cr.ID+"/approve", op, `{"subject":"alice"}`); st != 200 {
		t.Fatalf("approve: %d %s", st, body)
	}
	st, body = drillCall(t, "POST", base+"/v1/delegations/"+cr.ID+"/token", "", `{"pollSecret":"`+cr.PollSecret+`"}`)
	if st != 200 || jsonInto(body, &tk) != nil {
		t.Fatalf("token: %d %s", st, body)
	}
	return tk.Token, tk.SessionID
}

func drillCall(t *testing.T, method, url, bearer, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

// gwChat is a chat completion at the gateway with token: its status.
func gwChat(t *testing.T, base, token string) int {
	st, _ := drillCall(t, "POST", base+"/v1/chat/completions", token, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
	return st
}

func waitFor(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runPlingProc runs this test binary as pling with args, with the
// processes' KEK, and returns its output.
func runPlingProc(t *testing.T, args ...string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), asPlingEnv+"=1", kekEnv+"="+testKEK)
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%w (exit %d)", err, cmd.ProcessState.ExitCode())
	}
	return string(out), err
}

func jsonInto(body string, v any) error { return json.Unmarshal([]byte(body), v) }
