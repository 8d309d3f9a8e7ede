// Package run is what runs toolgate itself: `toolgate up` (every stage
// over an embedded NATS server, least privilege, the console, the HTTP
// ingest), `toolgate console`, `toolgate bench` and `toolgate chaos`.
package run
