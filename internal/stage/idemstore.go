package stage

import (
	"fmt"
	"slices"
)

// Where the execute stage keeps its idempotency keys (--idem-store,
// TOOLGATE_IDEM_STORE).
const (
	IdemRedis    = "redis"    // Redis at --redis; required when chosen
	IdemEmbedded = "embedded" // the JetStream key-value bucket toolgate_idempotency
	// IdemAuto, the zero value, is Redis when --redis is given and the
	// embedded bucket otherwise: `toolgate up`'s default, and the default of
	// a Config built in code.
	IdemAuto = ""
)

// idemStoreErr checks the idempotency store choice of a process that runs
// execute: a service (IdemRedis) without Redis refuses to start rather than
// fall back to the bucket, and an explicit choice may not contradict --redis.
func idemStoreErr(store, redisURL string) error {
	switch {
	case !slices.Contains([]string{IdemRedis, IdemEmbedded, IdemAuto}, store):
		return fmt.Errorf("stage: --idem-store %q: want %s (keys in Redis at --redis) or %s (keys in the JetStream bucket, one NATS deployment, development)", store, IdemRedis, IdemEmbedded)
	case store == IdemRedis && redisURL == "":
		return fmt.Errorf("stage: execute needs Redis for its idempotency keys: give --redis redis://HOST:6379/0 (TOOLGATE_REDIS_URL), or choose the JetStream key-value bucket with --idem-store %s (TOOLGATE_IDEM_STORE=%s)", IdemEmbedded, IdemEmbedded)
	case store == IdemEmbedded && redisURL != "":
		return fmt.Errorf("stage: --idem-store %s and --redis (TOOLGATE_REDIS_URL) are both given: choose one, --idem-store %s for Redis", IdemEmbedded, IdemRedis)
	}
	return nil
}
