package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Poll calls f every step until it returns nil, or total has passed; then
// it returns f's last error (nats-server's checkFor, without a test).
func Poll(total, step time.Duration, f func() error) error {
	deadline := time.Now().Add(total)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", total, err)
		}
		time.Sleep(step)
	}
}

// Eventually is Poll for a test: f's last error fails it.
func Eventually(t testing.TB, total, step time.Duration, f func() error) {
	t.Helper()
	if err := Poll(total, step, f); err != nil {
		t.Fatalf("testenv: condition not met %v", err)
	}
}
