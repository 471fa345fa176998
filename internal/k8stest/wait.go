package k8stest

import (
	"fmt"
	"time"
)

// poll calls cond every interval until it reports done, returns an error,
// or timeout passes; then it returns the last error, or a timeout error
// that says what was awaited.
func poll(what string, timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		done, err := cond()
		if done {
			return err
		}
		last = err
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("%s: not within %s: %w", what, timeout, last)
			}
			return fmt.Errorf("%s: not within %s", what, timeout)
		}
		time.Sleep(interval)
	}
}
