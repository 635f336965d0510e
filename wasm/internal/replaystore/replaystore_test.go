package replaystore

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// memStore is a Store over a map: what IndexedDB and navigator.locks are
// to the tabs of one origin, each Guard over it a tab (or a reload).
type memStore struct {
	mu      sync.Mutex
	m       map[string]string
	failSet atomic.Bool // Set fails, as storage does over its quota
	failGet atomic.Bool
	locks   atomic.Int64
}

func newMemStore() *memStore { return &memStore{m: map[string]string{}} }

func (s *memStore) Locked(_ context.Context, fn func(Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locks.Add(1)
	return fn(memTx{s})
}

type memTx struct{ s *memStore }

func (t memTx) Get(keys ...string) ([]string, []bool, error) {
	if t.s.failGet.Load() {
		return nil, nil, errors.New("SecurityError")
	}
	vals, oks := make([]string, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		vals[i], oks[i] = t.s.m[k]
	}
	return vals, oks, nil
}

func (t memTx) Write(changes []Change) error {
	if t.s.failSet.Load() {
		return errors.New("QuotaExceededError")
	}
	for _, c := range changes {
		if c.Remove {
			delete(t.s.m, c.Key)
		} else {
			t.s.m[c.Key] = c.Value
		}
	}
	return nil
}

func consume(g *Guard, session, id string, exp, now int64) string {
	prev, err := g.Consume(context.Background(), session, id, exp, now)
	switch {
	case errors.Is(err, ErrSessionFull):
		return "session full"
	case errors.Is(err, ErrFull):
		return "full"
	case err != nil:
		return "error"
	case prev != nil:
		return fmt.Sprintf("replay %+v", *prev)
	}
	return "new"
}

// TestGuardAcrossTabs: a second guard over the same store (another tab,
// or the same tab after a reload) sees the first one's ids and records.
func TestGuardAcrossTabs(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	tab1, tab2 := New(st, 100, 10), New(st, 100, 10)
	var got []string
	got = append(got, consume(tab1, "anonymous", "order-1", 1000, 0))
	got = append(got, consume(tab2, "anonymous", "order-1", 1000, 5)) // interrupted: not completed
	tab1.Complete(ctx, "anonymous", "order-1", runtime.ReplayRecord{OK: true, Code: "EXPECTATION_FAILED"})
	got = append(got, consume(tab2, "anonymous", "order-1", 1000, 6))
	got = append(got, consume(tab2, "s:0123abcd", "order-1", 1000, 6)) // another session: a new id
	got = append(got, consume(New(st, 100, 10), "anonymous", "order-1", 1000, 1000))
	want := []string{"new", "replay {Completed:false OK:false Code:}",
		"replay {Completed:true OK:true Code:EXPECTATION_FAILED}", "new", "new"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for k, v := range st.m {
		if strings.Contains(k+v, "order-1") {
			t.Errorf("the store holds a request id: %s = %q", k, v)
		}
	}
}

func TestGuardBounds(t *testing.T) {
	type step struct {
		session, id string
		exp, now    int64
		want        string
	}
	tests := []struct {
		name                 string
		capacity, perSession int
		steps                []step
	}{
		{"a session at its share is refused alone", 5, 2, []step{
			{"a", "1", 100, 0, "new"}, {"a", "2", 100, 0, "new"}, {"a", "3", 100, 0, "session full"},
			{"a", "1", 100, 0, "replay {Completed:false OK:false Code:}"},
			{"b", "1", 100, 0, "new"}, {"b", "2", 100, 0, "new"}, {"c", "1", 100, 0, "new"},
			{"d", "1", 100, 0, "full"},
		}},
		{"expiry makes room in a share", 10, 2, []step{
			{"a", "1", 50, 0, "new"}, {"a", "2", 100, 0, "new"}, {"a", "3", 100, 10, "session full"},
			{"a", "3", 100, 50, "new"}, {"a", "1", 200, 50, "session full"},
		}},
		{"expiry in another session makes room in a full store", 2, 2, []step{
			{"a", "1", 50, 0, "new"}, {"b", "1", 100, 0, "new"}, {"c", "1", 100, 10, "full"},
			{"c", "1", 100, 50, "new"}, {"a", "1", 100, 50, "full"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemStore()
			var got, want []string
			for i, s := range tt.steps {
				g := New(st, tt.capacity, tt.perSession) // a tab of its own each time
				got = append(got, fmt.Sprintf("%d %s/%s: %s", i, s.session, s.id, consume(g, s.session, s.id, s.exp, s.now)))
				want = append(want, fmt.Sprintf("%d %s/%s: %s", i, s.session, s.id, s.want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nstore: %q", diff, st.m)
			}
		})
	}
}

// A store that fails, or holds what the guard did not write, refuses:
// the guard never starts over and forgets consumed ids.
func TestGuardFailsClosed(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*memStore)
	}{
		{"storage full", func(s *memStore) { s.failSet.Store(true) }},
		{"storage unreadable", func(s *memStore) { s.failGet.Store(true) }},
		{"an index it did not write", func(s *memStore) { s.m[indexKey] = "garbage" }},
		{"a bucket it did not write", func(s *memStore) { s.m[bucketPfx+"anonymous"] = "AAAAAAAAAAAAAAAA 12 9" }},
		{"a duplicate entry", func(s *memStore) {
			s.m[bucketPfx+"anonymous"] = "AAAAAAAAAAAAAAAA 12 0\nAAAAAAAAAAAAAAAA 12 0"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemStore()
			tt.setup(st)
			if got := consume(New(st, 10, 5), "anonymous", "r1", 100, 0); got != "error" {
				t.Errorf("got %s, want an error", got)
			}
		})
	}
	t.Run("a refused id is not consumed", func(t *testing.T) {
		st := newMemStore()
		st.failSet.Store(true)
		g := New(st, 10, 5)
		consume(g, "anonymous", "r1", 100, 0)
		st.failSet.Store(false)
		if got := consume(g, "anonymous", "r1", 100, 1); got != "new" {
			t.Errorf("after the store recovered: %s, want new (the refused request never ran)", got)
		}
	})
	t.Run("a session key that cannot name a key", func(t *testing.T) {
		if got := consume(New(newMemStore(), 10, 5), "a b", "r1", 100, 0); got != "error" {
			t.Errorf("got %s", got)
		}
	})
}

// TestRuntimeAcrossReload: two runtimes over one store, as a page before
// and after a reload: an id sent to the first runs once; the second
// answers REPLAY_DETECTED with completed: false when the first was
// interrupted.
func TestRuntimeAcrossReload(t *testing.T) {
	st := newMemStore()
	var runs atomic.Int64
	block := make(chan struct{})
	newPage := func() *runtime.Runtime {
		rt := runtime.New(runtime.WithExpose("*"), runtime.WithReplayGuard(New(st, DefaultCapacity, DefaultSessionCapacity)))
		if _, err := rt.DeclareAction(runtime.Action{ID: "order.place", Title: "Place the order", Run: func(context.Context, *runtime.Call) (any, error) {
			runs.Add(1)
			<-block // the page navigates away: the handler never returns
			return nil, nil
		}}); err != nil {
			t.Fatal(err)
		}
		return rt
	}
	req := []byte(`{"protocol":"` + schema.Protocol + `","id":"order-1","method":"invoke","capability":"order.place"}`)
	before := newPage()
	go before.Handle(context.Background(), req)
	for runs.Load() == 0 {
		runtimeGosched()
	}
	after := newPage()
	got := string(after.Handle(context.Background(), req))
	want := `{"protocol":"pling.surface/0.1","id":"order-1","ok":false,"error":{"code":"REPLAY_DETECTED"`
	if !strings.HasPrefix(got, want) || !strings.Contains(got, `"previous":{"completed":false}`) {
		t.Errorf("after the reload: %s", got)
	}
	if runs.Load() != 1 {
		t.Errorf("ran %d times, want once", runs.Load())
	}
	close(block)
}

// TestGuardHammer: tabs (guards over one store) race on the same ids
// under several sessions: every id is consumed exactly once (-race).
func TestGuardHammer(t *testing.T) {
	const tabs, sessions, ids = 4, 3, 300
	st := newMemStore()
	wins := make([]atomic.Int32, sessions*ids)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for tab := range tabs {
		g := New(st, DefaultCapacity, DefaultSessionCapacity)
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for j := range ids {
					j := (j + tab*31) % ids
					prev, err := g.Consume(context.Background(), fmt.Sprint("s", s), fmt.Sprint(j), 1<<40, 0)
					if err != nil {
						t.Error(err)
						return
					}
					if prev == nil {
						wins[s*ids+j].Add(1)
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	for i := range wins {
		if n := wins[i].Load(); n != 1 {
			t.Fatalf("session %d id %d consumed %d times, want once", i/ids, i%ids, n)
		}
	}
}

func runtimeGosched() { goruntime.Gosched() }
