// Package modelclient sends the requests of internal/model over HTTP: one
// request offering one tool, returning the raw response body, which the
// caller reads with the same provider normalizer as any other response.
// Retries are bounded and only happen for failures that cannot have had a
// side effect worth protecting (a repair request has none): 408, 429, 5xx,
// network errors and per-request timeouts. It also reads the API key from
// its variable or a mounted file (LoadAPIKey).
package modelclient
