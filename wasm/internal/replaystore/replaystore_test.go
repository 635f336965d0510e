package replaystore

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/hammer"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// memStore is a Store over a map: what IndexedDB is to the tabs of one
// origin (its read-write transactions run one at a time), each Guard over
// it a tab (or a reload).
type memStore struct {
	mu      sync.Mutex
	m       map[string]string
	failSet atomic.Bool // the commit fails, as storage does over its quota
	failGet atomic.Bool
	// updates counts transactions, rounds their reads, read the
	// characters they read (keys and values).
	updates, rounds, read atomic.Int64
}

func newMemStore() *memStore { return &memStore{m: map[string]string{}} }

func (s *memStore) Update(_ context.Context, r Read, step func(Got) (*Read, []Change, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates.Add(1)
	for {
		s.rounds.Add(1)
		if s.failGet.Load() {
			return errors.New("SecurityError")
		}
		got := Got{Values: make([]string, len(r.Keys)), Found: make([]bool, len(r.Keys))}
		for i, k := range r.Keys {
			got.Values[i], got.Found[i] = s.m[k]
			s.read.Add(int64(len(k) + len(got.Values[i])))
		}
		if r.To != "" {
			for k := range s.m {
				if k >= r.From && k <= r.To {
					got.Range = append(got.Range, k)
					s.read.Add(int64(len(k)))
				}
			}
			sort.Strings(got.Range)
		}
		next, changes, err := step(got)
		if err != nil {
			return err
		}
		if next != nil {
			r = *next
			continue
		}
		if s.failSet.Load() {
			return errors.New("QuotaExceededError")
		}
		for _, c := range changes {
			if c.Remove {
				delete(s.m, c.Key)
			} else {
				s.m[c.Key] = c.Value
			}
		}
		return nil
	}
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
	tab1.Flush(ctx) // as its timer does
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
		{"a total it did not write", func(s *memStore) { s.m[totalKey] = "garbage" }},
		{"a count it did not write", func(s *memStore) { s.m[countPfx+"anonymous"] = "-1" }},
		{"a count with a leading zero", func(s *memStore) { s.m[countPfx+"anonymous"] = "01" }},
		{"a record it did not write", func(s *memStore) { s.m[idPfx+"anonymous."+digest("r1")] = "12 9" }},
		{"an expiry key it did not write", func(s *memStore) { s.m[expiryPfx+"0000000000000000.anonymous"] = "" }},
		{"an expired id its counts do not hold", func(s *memStore) {
			s.m[expiryPfx+"0000000000000000.anonymous.AAAAAAAAAAAAAAAA"] = ""
		}},
		{"an expired record missing from the expiry order", func(s *memStore) {
			s.m[idPfx+"anonymous."+digest("r1")] = "0 0"
			s.m[countPfx+"anonymous"], s.m[totalKey] = "1", "1"
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
	guards := make([]*Guard, tabs)
	for tab := range guards {
		guards[tab] = New(st, DefaultCapacity, DefaultSessionCapacity)
	}
	hammer.Run(tabs*sessions, func(i int) {
		tab, s := i/sessions, i%sessions
		g := guards[tab]
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
	})
	for i := range wins {
		if n := wins[i].Load(); n != 1 {
			t.Fatalf("session %d id %d consumed %d times, want once", i/ids, i%ids, n)
		}
	}
}

func runtimeGosched() { goruntime.Gosched() }

// TestGuardOneTransactionPerCall: a consume is one transaction, which
// reads once, and twice only when ids of another session have expired
// (their counts); a complete waits to be carried by the next one.
func TestGuardOneTransactionPerCall(t *testing.T) {
	ctx := context.Background()
	type cost struct{ Updates, Rounds int64 }
	st := newMemStore()
	g := New(st, 100, 10)
	measure := func(f func()) cost {
		u, r := st.updates.Load(), st.rounds.Load()
		f()
		return cost{st.updates.Load() - u, st.rounds.Load() - r}
	}
	got := map[string]cost{
		"consume": measure(func() { consume(g, "a", "1", 50, 0) }),
		"complete": measure(func() {
			g.Complete(ctx, "a", "1", runtime.ReplayRecord{OK: true})
		}),
		"flush":                       measure(func() { g.Flush(ctx) }),
		"replay":                      measure(func() { consume(g, "a", "1", 50, 1) }),
		"consume, own expired":        measure(func() { consume(g, "a", "2", 100, 60) }),
		"consume, another's expired":  measure(func() { consume(g, "b", "1", 200, 150) }),
		"consume, nothing to sweep":   measure(func() { consume(g, "b", "2", 200, 150) }),
		"complete of a swept id":      measure(func() { g.Complete(ctx, "a", "1", runtime.ReplayRecord{}) }),
		"consume carrying an outcome": measure(func() { consume(g, "b", "4", 300, 150) }),
		"consume at its share, swept": measure(func() { consume(New(st, 100, 1), "b", "3", 300, 250) }),
	}
	want := map[string]cost{
		"consume":                     {1, 1},
		"complete":                    {0, 0}, // carried by the next consume, or flushed
		"flush":                       {1, 1},
		"replay":                      {1, 1},
		"consume, own expired":        {1, 1},
		"consume, another's expired":  {1, 2},
		"consume, nothing to sweep":   {1, 1},
		"complete of a swept id":      {0, 0},
		"consume carrying an outcome": {1, 1},
		"consume at its share, swept": {1, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGuardReadsLittle: what a consume reads does not grow with the ids
// the store holds (the bucket layout read a session's whole list).
func TestGuardReadsLittle(t *testing.T) {
	read := map[int]int64{}
	for _, held := range []int{1, 1000} {
		st := newMemStore()
		g := New(st, DefaultCapacity, DefaultSessionCapacity)
		for i := range held {
			consume(g, "anonymous", fmt.Sprint("old-", i), 1<<40, 0)
			consume(g, fmt.Sprint("s:", i), fmt.Sprint("old-", i), 1<<40, 0)
		}
		before := st.read.Load()
		if got := consume(g, "anonymous", "new", 1<<40, 1); got != "new" {
			t.Fatalf("%d held: %s", held, got)
		}
		read[held] = st.read.Load() - before
	}
	if read[1000] > read[1]+8 { // the counts' digits
		t.Errorf("a consume read %d characters with 1 id held per session, %d with 1,000", read[1], read[1000])
	}
}

// TestGuardSweepLeavesNothing: once every id has expired, the next
// consume drops them all, counts included: the store holds that id alone.
func TestGuardSweepLeavesNothing(t *testing.T) {
	st := newMemStore()
	g := New(st, 100, 10)
	for i := range 5 {
		for _, s := range []string{"anonymous", "s:00ff", "s:0abc"} {
			consume(g, s, fmt.Sprint(i), int64(10+i), 0)
		}
	}
	g.Complete(context.Background(), "s:00ff", "3", runtime.ReplayRecord{OK: true})
	if got := consume(g, "s:00ff", "new", 1000, 14); got != "new" {
		t.Fatal(got)
	}
	h := digest("new")
	want := map[string]string{
		"n":                              "1",
		"s.s:00ff":                       "1",
		"i.s:00ff." + h:                  "1000 0",
		"x.0000000000001000.s:00ff." + h: "",
	}
	if diff := cmp.Diff(want, st.m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGuardCarriesOutcomes: an outcome is written by the next consume's
// transaction, or on its own after FlushDelay; until then another tab
// sees completed: false, and an id swept in the meantime is not written
// back.
func TestGuardCarriesOutcomes(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	tab1, tab2 := New(st, 100, 10), New(st, 100, 10)
	var got []string
	step := func(what, result string) { got = append(got, what+": "+result) }
	step("a", consume(tab1, "anonymous", "a", 1000, 0))
	tab1.Complete(ctx, "anonymous", "a", runtime.ReplayRecord{OK: true})
	step("a from tab 2, not written yet", consume(tab2, "anonymous", "a", 1000, 1))
	step("b carries a's outcome", consume(tab1, "anonymous", "b", 1000, 2))
	step("a from tab 2", consume(tab2, "anonymous", "a", 1000, 3))
	tab1.Complete(ctx, "anonymous", "b", runtime.ReplayRecord{Code: "EXECUTION_FAILED"})
	step("b again in tab 1, known there first", consume(tab1, "anonymous", "b", 1000, 4))
	step("b from tab 2", consume(tab2, "anonymous", "b", 1000, 5))
	step("d, soon expired", consume(tab1, "anonymous", "d", 10, 6))
	tab1.Complete(ctx, "anonymous", "d", runtime.ReplayRecord{OK: true})
	step("e sweeps d and carries its outcome", consume(tab1, "anonymous", "e", 1000, 20))
	want := []string{
		"a: new",
		"a from tab 2, not written yet: replay {Completed:false OK:false Code:}",
		"b carries a's outcome: new",
		"a from tab 2: replay {Completed:true OK:true Code:}",
		"b again in tab 1, known there first: replay {Completed:true OK:false Code:EXECUTION_FAILED}",
		"b from tab 2: replay {Completed:true OK:false Code:EXECUTION_FAILED}",
		"d, soon expired: new",
		"e sweeps d and carries its outcome: new",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	st.mu.Lock()
	_, resurrected := st.m[idPfx+"anonymous."+digest("d")]
	n := st.m[totalKey]
	st.mu.Unlock()
	if resurrected || n != "3" {
		t.Errorf("after the sweep: d's record held %v, total %q; want none, 3 (a, b, e)", resurrected, n)
	}

	// With no consume to carry it, the timer writes it.
	tab1.Complete(ctx, "anonymous", "e", runtime.ReplayRecord{OK: true})
	deadline := time.Now().Add(10 * FlushDelay)
	for {
		r := consume(tab2, "anonymous", "e", 1000, 30)
		if r == "replay {Completed:true OK:true Code:}" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("e from tab 2 after %v: %s", 10*FlushDelay, r)
		}
		time.Sleep(FlushDelay / 4)
	}
}
