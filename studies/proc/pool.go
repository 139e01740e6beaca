package proc

import (
	"context"
	"sync"
)

// Each calls do(i) for every i in [0, n) on at most jobs goroutines
// at once, and returns when every call that started has returned. Once
// ctx ends it starts no more calls and returns ctx's error; the calls
// under way are do's to end (they get ctx from their caller). A call
// offered as ctx ends may still start: one at the most.
func Each(ctx context.Context, n, jobs int, do func(i int)) error {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				do(i)
			}
		}()
	}
feed:
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return ctx.Err()
}
