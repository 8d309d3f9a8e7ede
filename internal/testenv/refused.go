package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Violations collects the permission violations the server reports to a
// connection: give Handler to nats.ErrorHandler.
type Violations struct {
	mu   sync.Mutex
	errs []string
}

// Handler is a nats.ErrHandler that keeps permission violations.
func (v *Violations) Handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrPermissionViolation) {
		v.mu.Lock()
		v.errs = append(v.errs, err.Error())
		v.mu.Unlock()
	}
}

// Saw returns nil once a violation on subject was reported.
func (v *Violations) Saw(subject string) error {
	return v.saw(`"`+subject+`"`, subject)
}

// SawPrefix returns nil once a violation on a subject starting with
// prefix was reported (a JetStream API subject that ends in what the
// client adds, such as a consumer's filter).
func (v *Violations) SawPrefix(prefix string) error {
	return v.saw(`"`+prefix, prefix+"…")
}

func (v *Violations) saw(quoted, what string) error {
	for _, e := range v.All() {
		if strings.Contains(e, quoted) {
			return nil
		}
	}
	return fmt.Errorf("no permission violation on %s yet; seen %s", what, strings.Join(v.All(), "; "))
}

// All is every violation reported so far.
func (v *Violations) All() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.errs...)
}

// Refused runs op, which the server must refuse as a permission violation
// (saw reports it), and returns as soon as the violation is reported. The
// server answers a denied publish or JetStream API request with an -ERR
// to the connection, never with a reply, so op alone would wait out its
// whole timeout, and a short timeout taken as the refusal would also pass
// an allowed operation that was merely slow. op succeeding fails the test;
// op failing otherwise still needs the violation reported.
func Refused(t testing.TB, what string, saw func() error, op func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s was allowed", what)
			}
			Eventually(t, 5*time.Second, 20*time.Millisecond, saw)
			return
		case <-tick.C:
			if saw() == nil {
				return
			}
		}
	}
}
