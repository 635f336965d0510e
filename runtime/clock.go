package runtime

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is the only way the runtime reads or waits on time, so that tests
// and the conformance suite can run on a fake one (docs/protocol.md §7.1: token
// expiry, rate-limit windows, loop windows, handoff and expectation timeouts
// all read it).
type Clock interface {
	// NowMs returns the current time in milliseconds.
	NowMs() int64
	// Sleep waits ms milliseconds or until ctx is done.
	Sleep(ctx context.Context, ms int64) error
	// After returns a channel that receives once ms milliseconds have
	// passed.
	After(ms int64) <-chan struct{}
}

// SystemClock is the wall clock.
type SystemClock struct{}

// NowMs implements Clock.
func (SystemClock) NowMs() int64 { return time.Now().UnixMilli() }

// Sleep implements Clock.
func (SystemClock) Sleep(ctx context.Context, ms int64) error {
	if ms <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// After implements Clock.
func (c SystemClock) After(ms int64) <-chan struct{} {
	ch, _ := c.afterStop(ms)
	return ch
}

// afterStop is After with a stop function. A wait that ends before its
// timeout stops the timer: on js/wasm a pending Go timer is a pending JS
// timeout, which keeps Node (and the page's event loop) busy until it
// fires, minutes after the decision.
func (SystemClock) afterStop(ms int64) (<-chan struct{}, func() bool) {
	ch := make(chan struct{})
	t := time.AfterFunc(time.Duration(max(ms, 0))*time.Millisecond, func() { close(ch) })
	return ch, t.Stop
}

// stoppableAfter is a Clock whose timers can be stopped (SystemClock).
type stoppableAfter interface {
	afterStop(ms int64) (<-chan struct{}, func() bool)
}

// afterStop returns c's After channel for ms and a function that stops
// the timer where c can (else it does nothing).
func afterStop(c Clock, ms int64) (<-chan struct{}, func() bool) {
	if s, ok := c.(stoppableAfter); ok {
		return s.afterStop(ms)
	}
	return c.After(ms), func() bool { return false }
}

// FakeClock is a deterministic clock starting at 0 ms. Nothing moves it but
// Advance and the runtime's own waits: Sleep and After move it forward at
// once by the time waited, as if the wait had happened. That makes a
// scripted run give the same result on every host.
type FakeClock struct {
	mu     sync.Mutex
	now    int64
	timers []fakeTimer
	seq    int
}

type fakeTimer struct {
	at  int64
	seq int
	fn  func()
}

// NewFakeClock returns a fake clock at startMs.
func NewFakeClock(startMs int64) *FakeClock { return &FakeClock{now: startMs} }

// NowMs implements Clock.
func (c *FakeClock) NowMs() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by ms and runs, in time order, every
// callback scheduled with AfterFunc that fell due.
func (c *FakeClock) Advance(ms int64) {
	if ms < 0 {
		return
	}
	c.mu.Lock()
	target := c.now + ms
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.Slice(c.timers, func(i, j int) bool {
			if c.timers[i].at != c.timers[j].at {
				return c.timers[i].at < c.timers[j].at
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		if len(c.timers) == 0 || c.timers[0].at > target {
			c.now = target
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		if t.at > c.now {
			c.now = t.at
		}
		c.mu.Unlock()
		t.fn()
	}
}

// AfterFunc schedules fn to run when the clock passes now+ms (during an
// Advance, a Sleep or an After). It models a page that updates later.
func (c *FakeClock) AfterFunc(ms int64, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.timers = append(c.timers, fakeTimer{at: c.now + max(ms, 0), seq: c.seq, fn: fn})
}

// pending is how many callbacks wait on the clock: a test that moves the
// clock for a deadline waits until the deadline is set.
func (c *FakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// afterFuncStop is AfterFunc with a function that removes the callback
// if it has not run, so a deadline that is not needed leaves nothing
// behind (a scripted run makes thousands).
func (c *FakeClock) afterFuncStop(ms int64, fn func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	seq := c.seq
	c.timers = append(c.timers, fakeTimer{at: c.now + max(ms, 0), seq: seq, fn: fn})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, t := range c.timers {
			if t.seq == seq {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// Sleep implements Clock by advancing the clock.
func (c *FakeClock) Sleep(ctx context.Context, ms int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(ms)
	return nil
}

// After implements Clock: the clock advances by ms and the returned channel
// is already closed.
func (c *FakeClock) After(ms int64) <-chan struct{} {
	c.Advance(ms)
	ch := make(chan struct{})
	close(ch)
	return ch
}
