package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrent: writers and a reader at once lose no byte (and,
// under -race, race on nothing).
func TestBufferConcurrent(t *testing.T) {
	const writers, writes = 8, 100
	var b Buffer
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range writes {
				b.Write([]byte("ab"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got, want := b.String(), strings.Repeat("ab", writers*writes); got != want {
		t.Errorf("%d bytes written, want %d", len(got), len(want))
	}
}
