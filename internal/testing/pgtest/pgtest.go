// Package pgtest runs a throwaway PostgreSQL cluster for tests: initdb into
// a temporary directory, postgres on a free loopback port (and a unix
// socket in that directory), one fresh database per DSN call, and a stop
// at the end of the test binary. It needs Debian's server binaries
// (/usr/lib/postgresql/*/bin, or initdb and postgres on PATH); without
// them the tests that ask for a database are skipped, unless
// PLING_REQUIRE_POSTGRES=1 or CI=true (internal/testing/require), which
// fails them.
//
// No postgres process outlives the test binary: Run stops the cluster
// after the tests; a watchdog process stops it when the test binary dies
// without running Run's stop (killed, crashed, timed out); and starting a
// cluster first removes the leftovers of a run whose watchdog died too.
//
// initdb and postgres refuse to run as root: as root they run as the
// "postgres" system user, which owns the temporary directory.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/pling-go/pling/internal/testing/require"
)

// RequireEnv is the variable that turns a missing PostgreSQL from a skip
// into a failure.
const RequireEnv = "PLING_REQUIRE_POSTGRES"

// ErrNotInstalled is returned by Start when the server binaries are not found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found: apt-get install postgresql")

// dirPrefix names each cluster's directory under os.TempDir(), so that a
// later run can find the leftovers of a crashed one.
const dirPrefix = "pling-pgtest-"

// Server is one running cluster.
type Server struct {
	Dir  string // the cluster's directory: data/, sock/, log, owner.pid
	Port int

	cmd      *exec.Cmd
	exited   chan struct{} // closed when postgres has exited
	watchdog *exec.Cmd
	lifeline *os.File // the write end of the watchdog's stdin; closing it (or dying) stops the cluster
	admin    *sql.DB
	// durable: PostgreSQL's default durability (durable.go), not the
	// fast settings; bin and cred start it again after a crash.
	durable  bool
	bin      string
	cred     *syscall.Credential
	n        atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

// Binaries returns the directory holding initdb and postgres
// (require.PostgresBinaries: the newest /usr/lib/postgresql/N/bin, else
// the directory of postgres on PATH).
func Binaries() (string, error) {
	if d := require.PostgresBinaries(); d != "" {
		return d, nil
	}
	return "", ErrNotInstalled
}

// credential is who runs initdb and postgres: nil (this user) unless we
// are root, then the postgres system user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres system user (Debian's postgresql package creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// Start initialises and starts a cluster; the caller must Stop it.
func Start() (*Server, error) { return startCluster(false) }

// startCluster initialises and starts a cluster in a new directory, with
// PostgreSQL's default durability when durable, or stops it and removes
// its directory.
func startCluster(durable bool) (*Server, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	CleanStale()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, durable: durable, bin: bin, cred: cred}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// command is one of the cluster's binaries, run in its directory as its
// owner with a fixed environment, in a process group of its own.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(s.bin, name), args...)
	c.Dir = s.Dir
	c.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return c
}

func (s *Server) start() error {
	if err := os.WriteFile(filepath.Join(s.Dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(s.Dir, "sock"), 0o700); err != nil {
		return err
	}
	if s.cred != nil {
		for _, p := range []string{s.Dir, filepath.Join(s.Dir, "sock")} {
			if err := os.Chown(p, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				return err
			}
		}
	}
	run := s.command
	data := filepath.Join(s.Dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync").CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	var lastErr error
	for range 3 { // a free port may be taken between picking it and binding it
		port, err := pickPort()
		if err != nil {
			return err
		}
		if lastErr = s.launch(run, data, port); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

// launch starts postgres on data and port and waits until it is ready.
func (s *Server) launch(run func(string, ...string) *exec.Cmd, data string, port int) error {
	{
		log, err := os.OpenFile(filepath.Join(s.Dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		if s.cred != nil {
			os.Chown(filepath.Join(s.Dir, "log"), int(s.cred.Uid), int(s.cred.Gid))
		}
		args := []string{"-D", data, "-p", strconv.Itoa(port), "-k", filepath.Join(s.Dir, "sock"),
			"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "shared_buffers=32MB"}
		if !s.durable {
			args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
		}
		c := run("postgres", args...)
		c.Stdout, c.Stderr = log, log
		err = c.Start()
		log.Close()
		if err != nil {
			return fmt.Errorf("pgtest: postgres: %w", err)
		}
		exited := make(chan struct{})
		s.cmd, s.Port, s.exited = c, port, exited
		go func() { c.Wait(); close(exited) }()
		if err := s.watch(); err != nil {
			return err
		}
		err = s.waitReady(exited)
		if err == nil {
			return nil
		}
		s.stopPostgres(exited)
		s.killWatchdog()
		return err
	}
}

// watch starts the watchdog: a shell reading its stdin, a pipe whose only
// write end this process holds. When this process exits, however it
// dies, the read sees end of file and the shell stops postgres (SIGQUIT:
// immediate shutdown; the postmaster takes its children with it).
func (s *Server) watch() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	wd := exec.Command("/bin/sh", "-c", `read x; kill -QUIT $2 2>/dev/null; i=0; while kill -0 $2 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL $2 2>/dev/null; rm -rf "$1"`, "sh", s.Dir, pid)
	wd.Stdin = r
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not stopped by a signal to the test's process group
	if err := wd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	r.Close()
	s.watchdog, s.lifeline = wd, w
	go wd.Wait()
	return nil
}

func (s *Server) killWatchdog() {
	if s.watchdog != nil && s.watchdog.Process != nil {
		s.watchdog.Process.Kill()
	}
	if s.lifeline != nil {
		s.lifeline.Close()
	}
	s.watchdog, s.lifeline = nil, nil
}

// pickPort picks the port to try (a variable for the test of a port
// taken meanwhile).
var pickPort = FreePort

// FreePort is a loopback TCP port free at the time of the call (the
// kernel's pick, released at once: another process may take it before
// the caller binds it).
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until our postgres answers on its own unix socket (a
// port may have been taken by another cluster starting at the same time:
// then ours exits, and a TCP ping would have reached the other), then
// checks that the loopback port is ours too.
func (s *Server) waitReady(exited <-chan struct{}) error {
	sock := fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", filepath.Join(s.Dir, "sock"), s.Port)
	db, err := sql.Open("pgx", sock)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			db.SetMaxOpenConns(4)
			if err := s.checkPort(); err != nil {
				db.Close()
				return err
			}
			s.admin = db
			return nil
		}
		select {
		case <-exited:
			db.Close()
			log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
			return fmt.Errorf("pgtest: postgres exited: %s", log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			db.Close()
			return fmt.Errorf("pgtest: postgres not ready after 60s: %v", err)
		}
	}
}

// checkPort checks that the loopback port reaches this cluster.
func (s *Server) checkPort() error {
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var dir string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('data_directory')").Scan(&dir); err != nil {
		return fmt.Errorf("pgtest: port %d: %w", s.Port, err)
	}
	if dir != filepath.Join(s.Dir, "data") {
		return fmt.Errorf("pgtest: port %d is another cluster's (%s)", s.Port, dir)
	}
	return nil
}

// DSN is the URL of database db on the cluster (user postgres, trust).
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", s.n.Add(1))
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return s.DSN(name), nil
}

// Stop stops postgres (fast shutdown, then immediate, then kill) and
// removes the cluster's directory.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.admin != nil {
			s.admin.Close()
		}
		if s.cmd != nil {
			s.stopPostgres(s.exited)
		}
		s.killWatchdog()
		s.stopErr = os.RemoveAll(s.Dir)
	})
	return s.stopErr
}

func (s *Server) stopPostgres(exited <-chan struct{}) {
	p := s.cmd.Process
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL} {
		p.Signal(sig)
		select {
		case <-exited:
			return
		case <-time.After(10 * time.Second):
		}
	}
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// A zombie (state Z) has exited.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// CleanStale stops and removes the clusters of earlier runs whose test
// binary is gone (its pid in owner.pid is not running): the backstop for
// a run whose watchdog died with it.
func CleanStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue // not started yet, or not ours
		}
		if owner, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && (owner == os.Getpid() || processAlive(owner)) {
			continue // a live run's cluster (this one's included)
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && isPostgresOf(pid, d) {
				syscall.Kill(pid, syscall.SIGQUIT)
				for i := 0; i < 100 && processAlive(pid); i++ {
					time.Sleep(50 * time.Millisecond)
				}
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		os.RemoveAll(d)
	}
}

// isPostgresOf reports whether pid is a postgres whose command line names
// the data directory under dir (so a recycled pid is never signalled).
func isPostgresOf(pid int, dir string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), filepath.Join(dir, "data"))
}

// The package's shared cluster, started on first use.
var shared struct {
	mu  sync.Mutex
	s   *Server
	err error
}

// Run runs the tests (m.Run) and stops the shared cluster if one was
// started; call it from TestMain: os.Exit(pgtest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s != nil {
		if err := shared.s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
		shared.s = nil
	}
	return code
}

// Shared returns the package's cluster, starting it on first use; it
// skips t when PostgreSQL is not installed, or fails it when PostgreSQL
// is required (require.Required) or the cluster does not start.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s == nil && shared.err == nil {
		shared.s, shared.err = Start()
	}
	req := ""
	if require.Required(require.PartPostgres) {
		req = "1"
	}
	switch outcome(shared.err, req) {
	case "skip":
		require.Missing(t, require.PartPostgres, shared.err.Error())
	case "fail":
		t.Fatal(shared.err)
	}
	return shared.s
}

// outcome is what a test does after starting the cluster failed with err
// (nil: it runs): a missing PostgreSQL skips, unless required.
func outcome(err error, require string) string {
	switch {
	case err == nil:
		return "run"
	case errors.Is(err, ErrNotInstalled) && require != "1":
		return "skip"
	}
	return "fail"
}

// DSN returns the DSN of a fresh database on the shared cluster (see Shared).
func DSN(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, err := s.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
