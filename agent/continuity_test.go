package agent_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

const taskOrigin = "https://shop.example"

// authorityServer runs the real authority on a SQLite file behind h (nil:
// the authority itself) and returns its URL and a delegation token.
func authorityServer(t *testing.T, wrap func(http.Handler) http.Handler) (string, string) {
	t.Helper()
	a := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{taskOrigin: {"*"}}, OperatorKeys: []string{"op"}}, wrap)
	s := a.DeviceGrant(t, authoritytest.Grant{Audience: taskOrigin, Scope: []string{"checkout.*"}, Agent: "shopper"})
	return a.URL, s.Token
}

type checkout struct {
	Step   string   `json:"step"`
	Cart   []string `json:"cart"`
	Status string   `json:"status,omitempty"`
}

// TestCheckoutAcrossReload carries a multi-page checkout across a reload:
// the first client writes "cart done"; a new client (the reloaded page's
// agent) reads the task, resumes from its state and finishes it.
func TestCheckoutAcrossReload(t *testing.T) {
	ctx := context.Background()
	base, tok := authorityServer(t, nil)
	before := agent.NewTaskClient(base, tok)
	id, rev, err := before.CreateTask(ctx, "checkout-42", checkout{Step: "start"})
	if err != nil || id != "checkout-42" || rev != 1 {
		t.Fatalf("create: %q %d %v", id, rev, err)
	}
	lease, err := before.AcquireLease(ctx, id, "tab-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rev, err = before.Update(ctx, id, lease.ID, rev, checkout{Step: "cart done", Cart: []string{"sku-1", "sku-2"}}); err != nil || rev != 2 {
		t.Fatalf("cart done: %d %v", rev, err)
	}

	// The reload: a new client instance knows only the task id.
	after := agent.NewTaskClient(base, tok)
	task, err := after.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var st checkout
	if err := task.Decode(&st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(checkout{Step: "cart done", Cart: []string{"sku-1", "sku-2"}}, st); diff != "" || task.Revision != 2 {
		t.Fatalf("resumed state at revision %d (-want +got)\n%s", task.Revision, diff)
	}
	if task.Lease == nil || task.Lease.Holder != "tab-1" {
		t.Fatalf("lease after reload: %+v", task.Lease)
	}
	// Another tab cannot take over while the lease is live…
	_, err = after.AcquireLease(ctx, id, "tab-2", time.Minute)
	var te *agent.TaskError
	if !errors.As(err, &te) || te.Code != perr.ContinuityLeaseHeld || te.Status != 423 || te.RetryAfterMs <= 0 ||
		!errors.Is(err, perr.New(perr.ContinuityLeaseHeld, "", nil)) {
		t.Fatalf("second tab: %v", err)
	}
	// …the same holder resumes with its lease.
	relet, err := after.AcquireLease(ctx, id, "tab-1", time.Minute)
	if err != nil || relet.ID != lease.ID {
		t.Fatalf("re-acquire after reload: %+v %v", relet, err)
	}
	st.Step = "shipping done"
	if rev, err = after.Update(ctx, id, relet.ID, task.Revision, st); err != nil || rev != 3 {
		t.Fatalf("shipping: %d %v", rev, err)
	}
	// A write from the stale view before the reload is refused.
	if _, err := before.Update(ctx, id, lease.ID, 2, checkout{Step: "stale"}); !errors.Is(err, perr.New(perr.ContinuityRevisionConflict, "", nil)) {
		t.Fatalf("stale write: %v", err)
	}
	st.Status, st.Step = "done", "paid"
	if rev, err = after.Update(ctx, id, relet.ID, rev, st); err != nil || rev != 4 {
		t.Fatalf("pay: %d %v", rev, err)
	}
	if _, err := after.Update(ctx, id, relet.ID, rev, st); !errors.Is(err, perr.New(perr.ContinuityInvalidState, "", nil)) {
		t.Fatalf("write after done: %v", err)
	}
	if err := after.Release(ctx, id, relet.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := after.Renew(ctx, id, relet.ID); !errors.Is(err, perr.New(perr.ContinuityLeaseExpired, "", nil)) {
		t.Fatalf("renew after release: %v", err)
	}
}

// TestTaskClientResendsWithTheSameKey loses the answer of the first PUT
// after the authority applied it: the client resends with the same
// Idempotency-Key and gets the first answer; the write is applied once.
func TestTaskClientResendsWithTheSameKey(t *testing.T) {
	ctx := context.Background()
	var puts, dropped atomic.Int32
	keys := make(chan string, 8)
	base, tok := authorityServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPut {
				h.ServeHTTP(w, r)
				return
			}
			puts.Add(1)
			keys <- r.Header.Get("Idempotency-Key")
			if dropped.Add(1) == 1 {
				h.ServeHTTP(httptest.NewRecorder(), r) // applied, answer lost
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	c := agent.NewTaskClient(base, tok)
	c.Backoff = 10 * time.Millisecond
	// A fresh connection per request: net/http itself resends a request
	// with an Idempotency-Key on a reused connection that failed, and this
	// test is about the client's own resend.
	c.HTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	id, rev, err := c.CreateTask(ctx, "", map[string]any{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.AcquireLease(ctx, id, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rev, err = c.Update(ctx, id, l.ID, rev, map[string]any{"n": 2}); err != nil || rev != 2 {
		t.Fatalf("update across a lost answer: %d %v", rev, err)
	}
	if puts.Load() < 2 {
		t.Fatalf("%d PUTs reached the server, want a resend", puts.Load())
	}
	first := <-keys
	for range puts.Load() - 1 {
		if k := <-keys; k != first || k == "" {
			t.Errorf("resent with key %q, want %q", k, first)
		}
	}
	task, err := c.Task(ctx, id)
	if err != nil || task.Revision != 2 {
		t.Fatalf("revision %v %v, want 2: the resent write applied twice?", task, err)
	}
}
