package syncbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// TestBufferConcurrentWrites: writes from many goroutines all land, whole
// (run with -race to see the mutex matter).
func TestBufferConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Errorf("%d lines, want 800", n)
	}
}
