// Command accumulate runs toolgate's accumulate gate as its own service: one replica of
// the "accumulate" durable consumer. Configure with flags or TOOLGATE_NATS_URL,
// TOOLGATE_REDIS_URL, TOOLGATE_HTTP_ADDR and TOOLGATE_LOG_LEVEL.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/stage"
)

func main() { os.Exit(stage.Main(stage.BindAccumulate(), os.Args[1:], os.Getenv)) }
