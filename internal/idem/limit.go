package idem

import (
	"errors"
	"fmt"
	"time"
)

// LimitError is Claim's refusal when a limit of the call is used up: nothing
// was claimed and nothing charged.
type LimitError struct {
	Limit string
	Key   string
	Used  int64 // of the limit, when refused
	Max   int64
	// PassAt is when enough of the window's usage has expired for the call
	// to fit; zero when it never can (its weight alone is over the maximum).
	PassAt time.Time
}

func (e *LimitError) Error() string {
	when := "never: its weight alone is over the maximum"
	if !e.PassAt.IsZero() {
		when = "from " + e.PassAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("idem: limit %s used %d of %d; the call fits %s", e.Limit, e.Used, e.Max, when)
}

// AsLimit reports whether err is a LimitError.
func AsLimit(err error) (*LimitError, bool) {
	var le *LimitError
	ok := errors.As(err, &le)
	return le, ok
}

// Usage is one key's use of a limit now (limits show).
type Usage struct {
	Used    int64
	Charges int // entries in the window
	// Oldest is the oldest charge still in the window: the usage starts to
	// fall when it passes out of it.
	Oldest time.Time
	// Overflow is the usage of the limit's shared overflow (keys evicted past
	// max_keys), counted against every key.
	Overflow int64
	Keys     int // keys tracked one by one
}
