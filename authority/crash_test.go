package authority_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestPostgresCrashUnderLoad: PostgreSQL with its default durability
// (fsync on) is crashed with pg_ctl stop -m immediate while three
// instances take task writes, then started again. Each writer retries a
// write whose answer it did not get with the same Idempotency-Key, as a
// client must. Afterwards every acknowledged write is there and none was
// applied twice: each task's state is its writer's last acknowledged
// count and its revision is exactly one more than that count.
func TestPostgresCrashUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("crashes and restarts a PostgreSQL cluster (about 15 s)")
	}
	pg, err := pgtest.StartDurable()
	if err != nil {
		if err == pgtest.ErrNotInstalled {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer pg.Stop()
	dsn, err := pg.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 3 {
		in, err := startInstance(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(in.stop)
		urls = append(urls, in.URL)
	}
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	defer cl.CloseIdleConnections()
	tok, _ := grant(t, cl, urls)

	const writers = 6
	type writer struct {
		task, lease string
		acked       int // the last acknowledged count
	}
	ws := make([]*writer, writers)
	for i := range ws {
		w := &writer{task: fmt.Sprintf("crash-%d", i)}
		mustCall(t, cl, urls[i%3], "POST", "/v1/tasks", tok, nil, map[string]any{"taskId": w.task, "state": map[string]any{"n": 0}}, 201)
		b := mustCall(t, cl, urls[i%3], "POST", "/v1/tasks/"+w.task+"/lease", tok, nil, map[string]any{"holder": w.task, "ttlSeconds": 600}, 200).body
		w.lease = b["leaseId"].(string)
		ws[i] = w
	}
	crashAt := time.Now().Add(1500 * time.Millisecond)
	stopAt := time.Now().Add(12 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; time.Now().Before(stopAt); k++ {
				// One write, retried with its key until a definite answer.
				hdr := map[string]string{"If-Match": quoted(int64(k)), "Idempotency-Key": fmt.Sprintf("%s-%d", w.task, k)}
				body := map[string]any{"leaseId": w.lease, "state": map[string]any{"n": k}}
				for attempt := 0; ; attempt++ {
					r, err := hcall(context.Background(), cl, urls[(i+attempt)%3], "PUT", "/v1/tasks/"+w.task, tok, hdr, body)
					if err == nil && r.status == 200 {
						w.acked = k
						break
					}
					if err == nil && r.status != 503 {
						errs <- fmt.Errorf("%s write %d: %d %s", w.task, k, r.status, r.raw)
						return
					}
					if time.Now().After(stopAt.Add(30 * time.Second)) {
						errs <- fmt.Errorf("%s write %d: no answer 30 s after the load ended: %v", w.task, k, err)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Until(crashAt))
	if err := pg.CrashRestart(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for i, w := range ws {
		b := mustCall(t, cl, urls[i%3], "GET", "/v1/tasks/"+w.task, tok, nil, nil, 200).body
		state, _ := b["state"].(map[string]any)
		n, _ := state["n"].(float64)
		rev, _ := b["revision"].(float64)
		if int(n) != w.acked || int(rev) != w.acked+1 {
			t.Errorf("%s: state n=%v revision %v, want n=%d revision %d (acknowledged writes lost or applied twice)", w.task, n, rev, w.acked, w.acked+1)
		}
		total += w.acked
	}
	t.Logf("%d acknowledged writes across the crash", total)
	if total < writers*2 {
		t.Errorf("only %d writes acknowledged: the load did not run across the crash", total)
	}
}
