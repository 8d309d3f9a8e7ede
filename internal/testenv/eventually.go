package testenv

import (
	"testing"
	"time"
)

// Eventually calls f every step until it returns nil, and fails the test
// with f's last error when total has passed (nats-server's checkFor).
func Eventually(t testing.TB, total, step time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: condition not met after %v: %v", total, err)
		}
		time.Sleep(step)
	}
}
