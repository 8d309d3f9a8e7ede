// Command policy runs toolgate's policy gate as its own service: one replica of
// the "policy" durable consumer. Configure with flags or TOOLGATE_NATS_URL,
// TOOLGATE_REDIS_URL, TOOLGATE_HTTP_ADDR and TOOLGATE_LOG_LEVEL.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/stage"
)

func main() { os.Exit(stage.Main(stage.BindPolicy(), os.Args[1:], os.Getenv)) }
