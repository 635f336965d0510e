// Package hammer releases many goroutines together against concurrent
// code (the registry, the replay guards, the error registry, an
// authority's store), so that they overlap as much as they can and the
// race detector and the test's own checks see the overlap.
package hammer

import "sync"

// Run starts n goroutines, each calling fn with its index from 0 to n-1,
// releases them all at once when every one has been started, and returns
// when all have returned. Whatever fn reports goes through its own
// channel or t.Error (both are safe from any goroutine).
func Run(n int, fn func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}
