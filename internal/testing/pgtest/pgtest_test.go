package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

func start(t *testing.T) *Server {
	t.Helper()
	Shared(t) // skips (or fails under PLING_REQUIRE_POSTGRES=1) without PostgreSQL
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func query(t *testing.T, dsn string) error {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	return db.QueryRowContext(ctx, "SELECT 1").Scan(&n)
}

// gone waits (up to a deadline) until pid has exited.
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); processAlive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: postgres (pid %d) still running", what, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStartDatabaseStop(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	a, err := s.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.NewDatabase(ctx)
	if a == b {
		t.Fatalf("two NewDatabase calls gave the same DSN %s", a)
	}
	if err := query(t, a); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
		if want := "Uid:\t0"; len(st) == 0 || contains(string(st), want) {
			t.Errorf("postgres runs as root (or is gone): %q", st)
		}
	}
	pid := s.cmd.Process.Pid
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	gone(t, pid, "after Stop")
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory left behind: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// When the test binary dies its end of the watchdog's pipe closes: closing
// it here is that death, seen from the watchdog.
func TestWatchdogStopsClusterWhenOwnerDies(t *testing.T) {
	s := start(t)
	pid := s.cmd.Process.Pid
	s.lifeline.Close()
	gone(t, pid, "after the lifeline closed")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(s.Dir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watchdog left the cluster directory")
		}
	}
}

// A run whose watchdog died too leaves a cluster behind; the next start
// stops it, found by its directory, owner.pid and postmaster.pid.
func TestCleanStaleStopsAnOrphan(t *testing.T) {
	s := start(t)
	pid := s.cmd.Process.Pid
	s.watchdog.Process.Kill() // the watchdog is gone, postgres runs on
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Dir+"/owner.pid", []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := query(t, s.DSN("postgres")); err != nil {
		t.Fatalf("the orphan should still run: %v", err)
	}
	live := start(t) // this process's: CleanStale leaves it
	CleanStale()
	gone(t, pid, "after CleanStale")
	if err := live.checkPort(); err != nil {
		t.Errorf("CleanStale stopped a live cluster of this process: %v", err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("CleanStale left the directory: %v", err)
	}
}

func TestMissingPostgresSkipsUnlessRequired(t *testing.T) {
	other := errors.New("initdb: boom")
	for _, c := range []struct {
		err     error
		require string
		want    string
	}{
		{nil, "", "run"}, {nil, "1", "run"},
		{ErrNotInstalled, "", "skip"}, {ErrNotInstalled, "0", "skip"}, {ErrNotInstalled, "1", "fail"},
		{other, "", "fail"}, {other, "1", "fail"},
	} {
		if got := outcome(c.err, c.require); got != c.want {
			t.Errorf("outcome(%v, %q) = %s, want %s", c.err, c.require, got, c.want)
		}
	}
}

// Two clusters starting at once may pick the same free port: the one that
// loses the bind must notice (its own socket never answers) and retry on
// another port, never take the other cluster for its own.
func TestStartSurvivesATakenPort(t *testing.T) {
	a := start(t)
	tries := 0
	pickPort = func() (int, error) {
		if tries++; tries == 1 {
			return a.Port, nil
		}
		return FreePort()
	}
	defer func() { pickPort = FreePort }()
	b, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if b.Port == a.Port || tries < 2 {
		t.Fatalf("b on port %d (a on %d) after %d tries", b.Port, a.Port, tries)
	}
	for _, s := range []*Server{a, b} { // both run, each on its own port
		if err := s.checkPort(); err != nil {
			t.Fatal(err)
		}
	}
}
