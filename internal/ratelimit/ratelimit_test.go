package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestKeyed walks one limiter (burst 2, one token per 4 s) through the
// token bucket's cases, each step an Allow at the clock after advance.
func TestKeyed(t *testing.T) {
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(0.25, 2, WithClock(c.now))
	type answer struct {
		OK    bool
		Retry time.Duration
	}
	steps := []struct {
		name    string
		advance time.Duration
		key     string
		want    answer
	}{
		{"first of the burst", 0, "a", answer{true, 0}},
		{"second of the burst", 0, "a", answer{true, 0}},
		{"past the burst: a token in 4 s", 0, "a", answer{false, 4 * time.Second}},
		{"a refusal spends nothing", 0, "a", answer{false, 4 * time.Second}},
		{"another key has its own bucket", 0, "b", answer{true, 0}},
		{"not refilled yet", 3 * time.Second, "a", answer{false, time.Second}},
		{"one token back", time.Second, "a", answer{true, 0}},
		{"and spent", 0, "a", answer{false, 4 * time.Second}},
		{"full again after the refill time, not beyond the burst", time.Minute, "a", answer{true, 0}},
		{"burst only", 0, "a", answer{true, 0}},
		{"then empty", 0, "a", answer{false, 4 * time.Second}},
	}
	for _, s := range steps {
		c.t = c.t.Add(s.advance)
		ok, retry := l.Allow(s.key)
		if diff := cmp.Diff(s.want, answer{ok, retry}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestKeyedBoundedMemory: the limiter remembers at most maxKeys keys;
// refilled buckets are dropped for new keys, and while every bucket is
// draining a new key is refused (fail closed), not let through.
func TestKeyedBoundedMemory(t *testing.T) {
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(1, 1, WithClock(c.now), WithMaxKeys(3))
	for i := range 3 {
		if ok, _ := l.Allow(fmt.Sprint("k", i)); !ok {
			t.Fatalf("k%d refused", i)
		}
	}
	if ok, retry := l.Allow("new"); ok || retry != time.Second {
		t.Errorf("a new key while every bucket drains: ok %v retry %v; want refused, retry 1s", ok, retry)
	}
	if n := l.Len(); n != 3 {
		t.Errorf("%d keys remembered, want 3", n)
	}
	c.t = c.t.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("new"); ok {
		t.Error("a new key before any bucket refilled was let through")
	}
	c.t = c.t.Add(time.Second)
	if ok, _ := l.Allow("new"); !ok {
		t.Error("a new key after the buckets refilled was refused")
	}
	if n := l.Len(); n != 1 {
		t.Errorf("%d keys remembered after the sweep, want 1 (only the new key)", n)
	}
}

// A limiter with a rate or burst that is not positive is off: New returns
// nil, whose Allow lets everything through.
func TestKeyedOff(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rate  float64
		burst int
	}{{"zero rate", 0, 5}, {"zero burst", 1, 0}, {"negative", -1, -1}} {
		t.Run(tt.name, func(t *testing.T) {
			l := New(tt.rate, tt.burst)
			if l != nil {
				t.Fatalf("New(%v, %d) = %v, want nil", tt.rate, tt.burst, l)
			}
			if ok, _ := l.Allow("k"); !ok {
				t.Error("a nil limiter refused")
			}
		})
	}
}

// Limiter is the interface the servers hold (a store-backed limiter can
// take Keyed's place).
var _ Limiter = (*Keyed)(nil)
