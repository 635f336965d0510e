package main

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestOperationsGuide runs every ```sh block of docs/operations.md as
// written, through sh, from the start to the restore: the guide's paths
// (/etc/pling, /var/lib/pling, /backup), its database URLs and its
// listen address are replaced by the test's own, and `pling` on the PATH
// is this binary. The authority the guide starts answers /readyz; the
// migrations, both backups and both restores exit 0; the restored
// PostgreSQL database starts with the guide's start command and answers
// /readyz, with its epoch changed.
func TestOperationsGuide(t *testing.T) {
	for _, tool := range []string{"sh", "openssl", "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the guide's commands need %s: %v", tool, err)
		}
	}
	pgBin, err := pgtest.Binaries()
	if err != nil {
		t.Skip(err)
	}
	srcDSN := pgtest.DSN(t)
	u, err := url.Parse(srcDSN)
	if err != nil {
		t.Fatal(err)
	}
	restoredDB := "pling_restored_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ru := *u
	ru.Path = "/" + restoredDB
	restoredDSN := ru.String()

	g := newGuideRig(t, pgBin, u)
	root, addr := g.root, g.addr
	rewrite := func(s, store string) string {
		return strings.NewReplacer(
			"postgres://pling@db.internal/pling_restored", restoredDSN,
			"postgres://pling@db.internal/pling?sslmode=verify-full", store,
			"postgres://pling@db.internal/pling", store,
			"pling_restored", restoredDB,
			"/etc/pling", filepath.Join(root, "etc"),
			"/var/lib/pling", filepath.Join(root, "var"),
			"/backup", filepath.Join(root, "backup"),
			"0.0.0.0:8090", addr,
			"2026-01-02", time.Now().Format("2006-01-02"),
		).Replace(s)
	}
	run, start, op := g.run, g.start, guideOperatorKey
	blocks := operationsBlocks(t)

	// Start: the KEK, then an instance on PostgreSQL.
	stopFirst := start("start", rewrite(blocks["start"].text, srcDSN))
	base := "http://" + addr
	cr := mustJSON(t, "POST", base+"/v1/delegations", "", `{"audience":"https://shop.example","scope":["orders.read"],"ttlSeconds":600,"agent":"a"}`, 201)
	mustJSON(t, "POST", base+"/v1/delegations/"+cr["id"].(string)+"/approve", op, `{"subject":"alice"}`, 200)
	mustJSON(t, "POST", base+"/v1/delegations/"+cr["id"].(string)+"/token", "", `{"pollSecret":"`+cr["pollSecret"].(string)+`"}`, 200)
	before := mustJSON(t, "GET", base+"/v1/revocations", "", "", 200)["epoch"]

	// The store: status, up and down as written, then up again for what
	// follows (down rolls the newest migration back).
	out := run("migrate", rewrite(blocks["migrate"].text, srcDSN))
	if !strings.Contains(out, "rolled back") {
		t.Errorf("migrate printed %q", out)
	}
	run("migrate up again", "pling authority migrate up --store "+srcDSN)

	// Backups: a SQLite store made by a first start, and the PostgreSQL
	// store the instance runs on.
	sqlitePath := filepath.Join(root, "var", "pling-authority.db")
	run("a SQLite store", "pling authority migrate up --store sqlite:"+sqlitePath)
	run("sqlite backup", rewrite(blocks["sqlite backup"].text, srcDSN))
	run("postgres backup", rewrite(blocks["postgres backup"].text, srcDSN))

	// Restoring, both.
	if out := run("sqlite restore", rewrite(blocks["sqlite restore"].text, srcDSN)); !strings.Contains(out, "restored: epoch") {
		t.Errorf("the SQLite restore printed %q", out)
	}
	if out := run("postgres restore", rewrite(blocks["postgres restore"].text, srcDSN)); !strings.Contains(out, "1 sessions revoked") {
		t.Errorf("the PostgreSQL restore printed %q", out)
	}
	// Start on the restored database with the guide's start command (the
	// KEK made once is kept).
	_, startCmdText, _ := strings.Cut(blocks["start"].text, "\n")
	stopFirst()
	start("start on the restored database", rewrite(startCmdText, restoredDSN))
	after := mustJSON(t, "GET", base+"/v1/revocations", "", "", 200)["epoch"]
	if after == before || after == nil {
		t.Errorf("the epoch after the restore is %v, before %v", after, before)
	}
}

// guideOperatorKey is the operator key the guide's authority starts with.
const guideOperatorKey = "op-key-of-the-guide"

// guideRig is where TestOperationsGuide runs the guide's blocks: a root
// standing for /, a PATH whose pling is this binary beside PostgreSQL's
// tools (pgBin) for the cluster at u, and the address the authority
// listens on.
type guideRig struct {
	t    *testing.T
	root string
	env  []string
	addr string
}

func newGuideRig(t *testing.T, pgBin string, u *url.URL) *guideRig {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	for _, d := range []string{bin, filepath.Join(root, "etc"), filepath.Join(root, "var"), filepath.Join(root, "backup")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "pling"), []byte("#!/bin/sh\nexec "+exe+" \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "operator-keys"), []byte(guideOperatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := pgtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, kekEnv+"=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	env = append(env, asPlingEnv+"=1", "PATH="+bin+":"+pgBin+":"+os.Getenv("PATH"),
		"PGHOST="+u.Hostname(), "PGPORT="+u.Port(), "PGUSER="+u.User.Username())
	return &guideRig{t: t, root: root, env: env, addr: "127.0.0.1:" + strconv.Itoa(port)}
}

func (g *guideRig) shell(block string) *exec.Cmd {
	cmd := exec.Command("sh", "-e", "-c", block)
	cmd.Env, cmd.Dir = g.env, g.root
	return cmd
}

// run runs a block to its end and returns what it printed; a failure
// fails the test.
func (g *guideRig) run(name, block string) string {
	g.t.Helper()
	out, err := g.shell(block).CombinedOutput()
	if err != nil {
		g.t.Fatalf("%s: %v\n%s\n%s", name, err, block, out)
	}
	return string(out)
}

// start runs a start block in the background until the test ends (its
// process group is stopped) and waits for /readyz.
func (g *guideRig) start(name, block string) (stop func()) {
	t := g.t
	t.Helper()
	cmd := g.shell(block)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get("http://" + g.addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited: %s", name, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready: %s", name, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return stop
}

// operationsBlocks are the ```sh blocks of docs/operations.md by what
// each does; a block of a kind this test does not know fails it, and so
// does a kind the guide lacks.
func operationsBlocks(t *testing.T) map[string]docBlock {
	t.Helper()
	blocks := map[string]docBlock{}
	kinds := []struct{ kind, marker string }{
		{"start", "openssl rand"}, {"migrate", "migrate status"}, {"sqlite backup", "VACUUM INTO"},
		{"postgres backup", "pg_dump"}, {"sqlite restore", "--from"}, {"postgres restore", "createdb"},
	}
	for _, b := range docBlocks(t, "docs/operations.md") {
		if b.lang != "sh" {
			continue
		}
		kind := ""
		for _, k := range kinds {
			if strings.Contains(b.text, k.marker) {
				kind = k.kind
				break
			}
		}
		if kind == "" {
			t.Fatalf("%s: a ```sh block this test does not know: run it here", b.name)
		}
		blocks[kind] = b
	}
	for _, k := range kinds {
		if _, ok := blocks[k.kind]; !ok {
			t.Fatalf("docs/operations.md has no %s block (%q)", k.kind, k.marker)
		}
	}
	return blocks
}

// mustJSON sends one request and decodes its JSON answer, failing the
// test unless the status is want.
func mustJSON(t *testing.T, method, url, bearer, body string, want int) map[string]any {
	t.Helper()
	st, b := drillCall(t, method, url, bearer, body)
	var m map[string]any
	if st != want || jsonInto(b, &m) != nil {
		t.Fatalf("%s %s: %d %s, want %d", method, url, st, b, want)
	}
	return m
}
