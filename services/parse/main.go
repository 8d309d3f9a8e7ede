// Command parse runs toolgate's parse gate as its own service: one replica of
// the "parse" durable consumer. Configure with flags or TOOLGATE_NATS_URL,
// TOOLGATE_REDIS_URL, TOOLGATE_HTTP_ADDR and TOOLGATE_LOG_LEVEL.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/stage"
)

func main() { os.Exit(stage.Main(stage.BindParse(), os.Args[1:], os.Getenv)) }
