package dlq

import (
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
)

// maxReplays bounds the replay count a record or a letter may claim
// (records.MaxReplays).
const maxReplays = records.MaxReplays

// DecodeStatus reads and checks the status record stored under key in the
// calls bucket (records.DecodeStatus); an error wraps
// records.ErrMalformedStatus.
func DecodeStatus(key string, data []byte) (pipeline.StatusRecord, error) {
	return records.DecodeStatus(key, data)
}
