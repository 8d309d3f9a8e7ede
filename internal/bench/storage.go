package bench

import "github.com/nats-io/nats.go/jetstream"

// Storage is how the ceiling's streams are stored: file or memory, and on
// how many replicas (the pipeline's: 3 on a three-node cluster).
type Storage struct {
	Type     jetstream.StorageType
	Replicas int
}

// FileStorage is file storage on replicas servers.
func FileStorage(replicas int) Storage {
	return Storage{Type: jetstream.FileStorage, Replicas: max(replicas, 1)}
}
