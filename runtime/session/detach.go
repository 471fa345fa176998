package session

import (
	"io"
	"sync"

	"github.com/cilium/ebpf/link"
)

// detachWorkers is how many links close at once. Closing a link waits in
// the kernel (RCU grace periods, ftrace updates) more than it computes, and
// the waits of different links overlap where the kernel lets them.
const detachWorkers = 64

// closeLinks closes every link, detachWorkers at a time where there are
// many, drawing "detaching N/M" on w (a terminal, or nil) meanwhile.
func closeLinks(links []link.Link, w io.Writer) {
	pr := &progress{w: w, total: len(links), verb: "detaching"}
	if len(links) < 2*detachWorkers {
		for _, l := range links {
			l.Close()
			pr.add(1)
		}
		pr.end()
		return
	}
	work := make(chan link.Link)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range detachWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				l.Close()
				mu.Lock()
				pr.add(1)
				mu.Unlock()
			}
		}()
	}
	for _, l := range links {
		work <- l
	}
	close(work)
	wg.Wait()
	pr.end()
}
