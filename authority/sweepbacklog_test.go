package authority_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestSweeperFairOnABacklog: on SQLite, a backlog of lease history (a
// day's worth of old rows, 30,000 here; PLING_TEST_SWEEP_ROWS sets it)
// does not hold the other tables back: the first sweep, cut short by its
// deadline, already deleted the stale rate buckets, and sweeps one after
// another empty the backlog. The rate is logged (rows a second of sweep
// time).
// reclaimLeft is how many free pages may stay in the file once the sweeps
// gave back what they freed.
const reclaimLeft = 64

func TestSweeperFairOnABacklog(t *testing.T) {
	rows := 30_000
	if v := os.Getenv("PLING_TEST_SWEEP_ROWS"); v != "" {
		var err error
		if rows, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	const buckets = 10
	ctx := context.Background()
	st, path := authoritytest.SQLite(t)
	now := time.Now()
	db := authoritytest.SQLiteFile(t, path)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	old := now.Add(-48 * time.Hour).UnixMilli()
	for i := range rows {
		if _, err := tx.Exec(`INSERT INTO task_leases (lease_id, task_id, holder, ttl_ms, acquired_ms) VALUES (?, ?, 'h', 60000, ?)`,
			fmt.Sprintf("l%09d", i), fmt.Sprintf("t%d", i%1000), old+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 { // tasks the history belonged to, none holding one of those leases
		if _, err := tx.Exec(`INSERT INTO tasks (id, owner, revision, state, created_ms, updated_ms) VALUES (?, 'o', 1, '{}', ?, ?)`,
			fmt.Sprintf("t%d", i), now.UnixMilli(), now.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range buckets {
		if _, err := tx.Exec(`INSERT INTO rate_buckets (bucket, tokens, at_ms) VALUES (?, 1, ?)`, fmt.Sprintf("create:b%d", i), now.Add(-2*time.Hour).UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The insert's WAL is checkpointed here, not in the first sweep's
	// 2 s.
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	var pagesBefore int
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pagesBefore); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Batches of 25 rows: the backlog takes rows/25 rounds, each followed
	// by a pause of at least 5 ms, so one sweep of it needs at least
	// 6 s whatever the machine's speed, three times the deadline (with
	// SQLite's 100 a fast machine swept 30,000 rows within the 2 s).
	srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}},
		Retention: authority.RetentionConfig{SweepTimeout: 2 * time.Second, SweepEvery: time.Hour, SweepBatch: 25}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := srv.SweepOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Partial {
		t.Fatalf("the first sweep of %d rows was not cut short by its 2 s deadline: %+v", rows, first)
	}
	if got := first.Rows["rate_buckets"]; got != buckets {
		t.Fatalf("the first (partial) sweep deleted %d of %d stale rate buckets: the backlog held them back (%v)", got, buckets, first.Rows)
	}
	began := time.Now()
	for sweeps := 1; ; sweeps++ {
		if sweeps > 100_000 {
			t.Fatalf("the backlog is not gone after %d sweeps", sweeps)
		}
		res, err := srv.SweepOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Partial {
			break
		}
	}
	took := time.Since(began)
	db = authoritytest.SQLiteFile(t, path)
	var left int
	if err := db.QueryRow(`SELECT COUNT(*) FROM task_leases`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows of lease history left after the sweeps (%v)", left, err)
	}
	// The file gives the deleted rows' pages back (incremental
	// auto-vacuum, a bounded number per sweep): a few sweeps more, and it
	// is as small as the rows left need.
	for range 5 {
		if _, err := srv.SweepOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var pagesAfter, free int
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pagesAfter); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if pagesAfter*2 > pagesBefore || free > reclaimLeft {
		t.Errorf("the file is %d pages (%d free) after the backlog went, %d before it: the deleted rows' pages were not given back", pagesAfter, free, pagesBefore)
	}
	t.Logf("file: %d pages before the sweeps, %d after (%d free)", pagesBefore, pagesAfter, free)
	t.Logf("%d rows of lease history swept in %v of sweeps (%.0f rows/s, at most a third of the store's time)",
		rows, took.Round(time.Millisecond), float64(rows)/took.Seconds())
}
