package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/wirejson"
)

// auditTextMax bounds each error of an audit event cut to fit in its
// result (cutAudit): the result keeps the errors themselves (to TextMax).
const auditTextMax = 512

// fitAudit bounds an audit event's errors, and its redacted arguments when
// the event would not fit.
func (em *Emitter) fitAudit(ev AuditEvent) AuditEvent {
	ev.Errors = FitErrors(ev.Errors)
	if len(ev.RawArgumentsRedacted) > em.bodyBudget()/2 {
		ev.RawArgumentsRedacted = result.CutText(ev.RawArgumentsRedacted, ExcerptMax)
	}
	return ev
}

// auditStream reports whether audit events go to toolgate.audit.<status>
// besides the results (AuditStream).
func (em *Emitter) auditStream() bool { return em != nil && em.AuditStream }

// cutAudit is ev with its large parts cut, for a result that would not fit
// with them: the redacted arguments to ExcerptMax, each error to
// auditTextMax, each cut naming its size and sha256.
func cutAudit(ev AuditEvent) *AuditEvent {
	ev.RawArgumentsRedacted = result.CutText(ev.RawArgumentsRedacted, ExcerptMax)
	errs := make([]string, 0, len(ev.Errors))
	for _, e := range ev.Errors {
		errs = append(errs, result.CutText(e, auditTextMax))
	}
	if len(ev.Errors) > 0 {
		ev.Errors = errs
	}
	return &ev
}

// shortAudit is ev at its smallest, for a result that would not fit even
// with cutAudit's: the redacted arguments and the errors each replaced by
// their size and sha256 (the hash of the raw arguments stays).
func shortAudit(ev AuditEvent) *AuditEvent {
	ev.RawArgumentsRedacted = result.CutText(ev.RawArgumentsRedacted, 0)
	if len(ev.Errors) > 0 {
		joined := strings.Join(ev.Errors, "\n")
		sum := sha256.Sum256([]byte(joined))
		ev.Errors = []string{fmt.Sprintf("cut by toolgate: %d errors, %d bytes, sha256 %s", len(ev.Errors), len(joined), hex.EncodeToString(sum[:]))}
	}
	return &ev
}

// cutFormAudit is cutForm with the call's audit event beside it (nil:
// none): a result that cannot fit still carries its audit.
func (em *Emitter) cutFormAudit(data []byte, err error, callID, responseID string, ev *AuditEvent) []byte {
	out := em.cutForm(data, err, callID, responseID)
	if ev == nil {
		return out
	}
	var form map[string]json.RawMessage
	audit, aerr := wirejson.Marshal(ev)
	if aerr != nil || json.Unmarshal(out, &form) != nil {
		return out
	}
	form["audit"] = audit
	with, merr := json.Marshal(form)
	if merr != nil || len(with) > em.bodyBudget() {
		return out
	}
	return with
}
