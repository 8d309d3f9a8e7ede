// Command business runs toolgate's business gate as its own service: one replica of
// the "business" durable consumer. Configure with flags or TOOLGATE_NATS_URL,
// TOOLGATE_REDIS_URL, TOOLGATE_HTTP_ADDR and TOOLGATE_LOG_LEVEL.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/stage"
)

func main() { os.Exit(stage.Main(stage.BindBusiness(), os.Args[1:], os.Getenv)) }
