package hammer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestRun: the n calls overlap (each waits until all n have begun, which
// calls made one after another never reach), each index is called once,
// and Run returns after the last call has.
func TestRun(t *testing.T) {
	const n = 64
	var arrived, returned atomic.Int32
	all := make(chan struct{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	seen := make([]atomic.Int32, n)
	Run(n, func(i int) {
		defer returned.Add(1)
		seen[i].Add(1)
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			t.Errorf("call %d: the calls did not overlap (%d of %d began)", i, arrived.Load(), n)
		}
	})
	if got := returned.Load(); got != n {
		t.Errorf("Run returned after %d of %d calls", got, n)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Errorf("index %d called %d times", i, c)
		}
	}
}
