package runtime

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFakeClockAdvanceRunsCallbacksInTimeOrder(t *testing.T) {
	c := NewFakeClock(1000)
	var log []string
	at := func(name string) func() {
		return func() { log = append(log, fmt.Sprintf("%s@%d", name, c.NowMs())) }
	}
	c.AfterFunc(300, at("c"))
	c.AfterFunc(100, at("a"))
	c.AfterFunc(200, at("b1"))
	c.AfterFunc(200, at("b2")) // same time: scheduling order
	c.AfterFunc(-5, at("now")) // negative: due now
	c.AfterFunc(1000, at("later"))
	c.AfterFunc(100, func() {
		log = append(log, fmt.Sprintf("nested@%d", c.NowMs()))
		c.AfterFunc(50, at("child")) // scheduled during Advance, still due within it
	})

	c.Advance(300)
	want := []string{"now@1000", "a@1100", "nested@1100", "child@1150", "b1@1200", "b2@1200", "c@1300"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("callbacks (-want +got):\n%s", diff)
	}
	if c.NowMs() != 1300 {
		t.Errorf("NowMs = %d, want 1300", c.NowMs())
	}
	c.Advance(-10) // a negative advance changes nothing
	if c.NowMs() != 1300 {
		t.Errorf("NowMs after a negative advance = %d", c.NowMs())
	}
	log = nil
	c.Advance(699)
	if len(log) != 0 {
		t.Errorf("ran early: %v", log)
	}
	c.Advance(1)
	if diff := cmp.Diff([]string{"later@2000"}, log); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c.Advance(0)
	if len(log) != 1 {
		t.Errorf("a callback ran twice")
	}
}

func TestFakeClockSleepAndAfterAdvance(t *testing.T) {
	c := NewFakeClock(0)
	fired := 0
	c.AfterFunc(50, func() { fired++ })
	if err := c.Sleep(context.Background(), 40); err != nil || c.NowMs() != 40 || fired != 0 {
		t.Errorf("Sleep(40): err %v, now %d, fired %d", err, c.NowMs(), fired)
	}
	ch := c.After(10)
	select {
	case <-ch:
	default:
		t.Errorf("After's channel is not ready")
	}
	if c.NowMs() != 50 || fired != 1 {
		t.Errorf("After(10): now %d, fired %d", c.NowMs(), fired)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, 100); err == nil || c.NowMs() != 50 {
		t.Errorf("Sleep with a done context: err %v, now %d (must not advance)", err, c.NowMs())
	}
}

func TestSystemClock(t *testing.T) {
	var c Clock = SystemClock{}
	if d := c.NowMs() - time.Now().UnixMilli(); d < -1000 || d > 1000 {
		t.Errorf("NowMs is %d ms off", d)
	}
	start := time.Now()
	if err := c.Sleep(context.Background(), 5); err != nil || time.Since(start) < 5*time.Millisecond {
		t.Errorf("Sleep(5): %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, 10_000); err == nil {
		t.Errorf("Sleep ignores a done context")
	}
	if err := c.Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	select {
	case <-c.After(1):
	case <-time.After(5 * time.Second):
		t.Errorf("After(1) never fired")
	}
}

// wait prefers an answer that is already there over an expired timer, so
// scripted answers are deterministic on a fake clock.
func TestWait(t *testing.T) {
	c := NewFakeClock(0)
	ready := make(chan int, 1)
	ready <- 7
	if v, ok := wait(context.Background(), c, ready, 100); !ok || v != 7 || c.NowMs() != 0 {
		t.Errorf("ready value: %v %v, clock %d", v, ok, c.NowMs())
	}
	never := make(chan int)
	if _, ok := wait(context.Background(), c, never, 100); ok || c.NowMs() != 100 {
		t.Errorf("no answer: ok %v, clock %d", ok, c.NowMs())
	}
	// An answer that arrives while the clock runs out still wins.
	late := make(chan int, 1)
	c.AfterFunc(100, func() { late <- 9 })
	if v, ok := wait(context.Background(), c, late, 100); !ok || v != 9 {
		t.Errorf("answer at the deadline: %v %v", v, ok)
	}
	closed := make(chan int)
	close(closed)
	if _, ok := wait(context.Background(), c, closed, 100); ok {
		t.Errorf("a closed channel is an answer")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := wait(ctx, SystemClock{}, never, 60_000); ok {
		t.Errorf("a done context is an answer")
	}
}

// The options' durations reach the millisecond clock rounded up, so a
// positive duration never becomes 0 ("the default" or "off").
func TestDurationMs(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want int64
	}{
		{"zero", 0, 0},
		{"whole", 1500 * time.Millisecond, 1500},
		{"under a millisecond", time.Microsecond, 1},
		{"a fraction over", time.Millisecond + time.Nanosecond, 2},
		{"negative", -time.Second, -1000},
		{"largest", math.MaxInt64, math.MaxInt64/int64(time.Millisecond) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := durationMs(tc.d); got != tc.want {
				t.Errorf("durationMs(%v) = %d, want %d", tc.d, got, tc.want)
			}
		})
	}
}
