package gojs

import (
	"context"
	"time"
)

// The event loop. Go's scheduler asks for one timeout at a time
// (scheduleTimeoutEvent) when every goroutine is blocked and a timer is
// pending, and clears it (clearTimeoutEvent) when the resume it caused runs.
// The host fires due timeouts in deadline order, one resume each, with the
// instance's lock held, so timers and Calls never overlap.

// missedRetries bounds wasm_exec.js's "missed timeout event" loop, which
// resumes again while the fired timeout is still registered.
const missedRetries = 16

// drain fires timeouts until none is pending. It is called with i.mu held
// and releases it while it waits for the next deadline.
func (i *Instance) drain(ctx context.Context) error {
	for {
		if i.exited {
			return nil
		}
		if err := i.usable(); err != nil {
			return err
		}
		id, deadline, ok := i.nextDeadline()
		if !ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if wait := time.Until(deadline); wait > 0 {
			i.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			i.mu.Lock()
			continue // the timers may have changed meanwhile
		}
		if err := i.entry(ctx, func() error { return i.fire(id) }); err != nil {
			if i.exited {
				return nil
			}
			return err
		}
	}
}

func (i *Instance) nextDeadline() (id int32, deadline time.Time, ok bool) {
	for tid, d := range i.timers {
		if !ok || d.Before(deadline) || d.Equal(deadline) && tid < id {
			id, deadline, ok = tid, d, true
		}
	}
	return id, deadline, ok
}

// fire is the setTimeout callback of scheduleTimeoutEvent.
func (i *Instance) fire(id int32) error {
	for range missedRetries {
		if err := i.resume(); err != nil {
			return err
		}
		if _, pending := i.timers[id]; !pending {
			return nil
		}
	}
	delete(i.timers, id) // Go did not take it; do not spin forever
	return nil
}
