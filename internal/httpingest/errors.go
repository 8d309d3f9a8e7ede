package httpingest

import (
	"encoding/json"
	"net/http"
)

// Error codes of the JSON error body {"error": "...", "code": "..."}.
const (
	CodeBadRequest   = "bad_request"       // a header, parameter or body toolgate cannot take
	CodeTooLarge     = "too_large"         // the body is over the limit
	CodeUnauthorized = "unauthorized"      // no valid bearer token or Toolgate-Token
	CodeForbidden    = "forbidden"         // the credential may not act for that tenant or principal
	CodeTenant       = "tenant_not_served" // no connection of this service reads the tenant's results
	CodeUnavailable  = "unavailable"       // NATS did not take the message
	// CodeConflict: the response id was used before with other content
	// (refused at publish on a tenant's claimed subject): nothing stored.
	CodeConflict = "response_id_conflict"
	CodeNotFound = "not_found"
	CodeMethod   = "method_not_allowed"
)

// problem is the body of every error answer.
type problem struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// ResponseID and Outcomes: a body refused yet recorded (malformed
	// JSON) has its rejection to read there, as any outcome.
	ResponseID string `json:"response_id,omitempty"`
	Outcomes   string `json:"outcomes,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages read "<token>", not "\u003ctoken\u003e"; nosniff keeps it JSON
	_ = enc.Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, problem{Error: msg, Code: code})
}
