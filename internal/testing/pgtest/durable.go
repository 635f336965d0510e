package pgtest

import (
	"fmt"
	"path/filepath"
	"time"
)

// StartDurable initialises and starts a cluster with PostgreSQL's default
// durability (fsync, synchronous_commit and full_page_writes on), for the
// tests that crash it (CrashRestart); the caller must Stop it.
func StartDurable() (*Server, error) { return startCluster(true) }

// CrashRestart crashes the cluster (pg_ctl stop -m immediate: no
// checkpoint, the server processes quit at once, as in a power cut of
// the database but not of the disk) and starts it again on the same data
// directory and port, waiting until it has replayed its WAL and answers.
func (s *Server) CrashRestart() error {
	run := s.command
	data := filepath.Join(s.Dir, "data")
	if out, err := run("pg_ctl", "stop", "-D", data, "-m", "immediate", "-w").CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop -m immediate: %v\n%s", err, out)
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("pgtest: postgres did not exit after pg_ctl stop -m immediate")
	}
	s.killWatchdog()
	if s.admin != nil {
		s.admin.Close()
		s.admin = nil
	}
	return s.launch(run, data, s.Port)
}
