package kvcas

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestConflict_is_either_wrong_last_sequence_and_nothing_else(t *testing.T) {
	for err, want := range map[error]bool{
		&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}:         true,
		&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}: true,
		fmt.Errorf("update: %w", jetstream.ErrKeyRevisionMismatch):                                    true,
		jetstream.ErrKeyExists: true,
		&jetstream.APIError{Code: 503, ErrorCode: jetstream.JSErrCodeJetStreamNotEnabled}: false,
		errors.New("nats: timeout"): false,
		nil:                         false,
	} {
		if got := Conflict(err); got != want {
			t.Errorf("Conflict(%v) = %v, want %v", err, got, want)
		}
	}
}
