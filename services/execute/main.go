// Command execute runs toolgate's execute gate as its own service: one replica of
// the "execute" durable consumer. Configure with flags or TOOLGATE_NATS_URL,
// TOOLGATE_REDIS_URL, TOOLGATE_HTTP_ADDR and TOOLGATE_LOG_LEVEL. It refuses to
// start without Redis unless --idem-store embedded (TOOLGATE_IDEM_STORE) asks
// for the JetStream key-value bucket.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/stage"
)

func main() { os.Exit(stage.Main(stage.BindExecute(), os.Args[1:], os.Getenv)) }
