// Command ingest-http is toolgate's HTTP ingest as its own service, for
// producers that do not speak NATS: POST /v1/responses publishes a provider
// response or transcript, GET /v1/responses/{id}/outcomes?wait=10s reads
// what became of its calls. It is stateless but for a bounded cache of
// recent results: run as many replicas as needed against one NATS. Every
// request authenticates: a producer's bearer token, made once in the
// secrets directory (ingest-http-<producer user>.token), or the identity
// issuer's JWT. Flags or TOOLGATE_INGEST_HTTP, TOOLGATE_NATS_URL,
// TOOLGATE_NATS_USER, TOOLGATE_NATS_PASSWORD, TOOLGATE_SECRETS and the
// TOOLGATE_IDENTITY_* variables.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/httpingest"
)

func main() { os.Exit(httpingest.Main(os.Args[1:], os.Getenv)) }
