package dlq

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// callSuffixRE is what follows "<response-id>-" in a call id: the call's
// index, or "text" for a carrier.
var callSuffixRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// check returns why l cannot be what toolgate dead-letters ("" when it
// can): its subject is toolgate.dlq.<stage>.<failure> of a real stage; a
// call's envelope names a call of its response, in a known status, the one
// its headers name; input keeps the ingest subject it arrived on.
func (l Letter) check() string {
	if !strings.HasPrefix(l.Subject, strings.TrimSuffix(streams.DLQ("", ""), ".")) || strings.Count(l.Subject, ".") != 3 || !streams.IsStage(l.Stage) {
		return fmt.Sprintf("subject %q is not toolgate.dlq.<stage>.<failure> of a toolgate stage", redact.Clip(l.Subject))
	}
	if e := l.Envelope; e != nil {
		// <response-id>-<suffix>, or <tenant-key>=<response-id>-<suffix>
		// (wire.CallID) for the call's own tenant.
		tk, rest := wire.SplitCallID(e.CallID)
		suffix, ok := strings.CutPrefix(rest, e.ResponseID+"-")
		ok = ok && (tk == "" || tk == wire.TenantKey(e.Request.Tenant))
		switch {
		case !call.ValidResponseID(e.ResponseID):
			return fmt.Sprintf("response id %q is not a token", redact.Clip(e.ResponseID))
		case !ok || !callSuffixRE.MatchString(suffix):
			return fmt.Sprintf("call id %q is not a call of response %s", redact.Clip(e.CallID), e.ResponseID)
		case e.Replays < 0 || e.Replays > maxReplays || e.RepairAttempts < 0:
			return "negative or out-of-range replay or repair counts"
		case !slices.Contains(call.Statuses(), e.Status):
			return fmt.Sprintf("unknown status %q", redact.Clip(string(e.Status)))
		case l.Header.Get(streams.HeaderCallID) != "" && l.Header.Get(streams.HeaderCallID) != e.CallID:
			return fmt.Sprintf("header names call %q, the envelope %s", redact.Clip(l.Header.Get(streams.HeaderCallID)), e.CallID)
		}
		return ""
	}
	switch {
	case l.OrigSubject == "":
		return "neither a call envelope nor input with the subject it arrived on"
	case !ingest(l.OrigSubject) && !strings.HasPrefix(l.OrigSubject, streams.Gate("")):
		return fmt.Sprintf("input from %q, which no toolgate stage consumes", redact.Clip(l.OrigSubject))
	case l.ResponseID != "" && !call.ValidResponseID(l.ResponseID):
		return fmt.Sprintf("response id %q is not a token", redact.Clip(l.ResponseID))
	}
	return ""
}

// replayTo is where input that arrived on subject is published again: the
// same subject, except a tenant's claimed subject
// (toolgate.in.t.<tenant>.response.<rid>), which the input itself still
// holds for the claim period: it goes on the tenant's response subject,
// with its response id header, where accumulate's claim compares equal
// content with what holds the claimed subject and goes on under the same
// call ids (other content there is refused response_id_conflict).
func replayTo(subject string) (to, rid string) {
	if base, _, _, ok := streams.SplitClaimedPartition(subject); ok { // stored with its partition (streams/claimed_partitions.go)
		subject = base
	}
	if base, _, _, ok := streams.SplitInPartition(subject); ok { // a stream event or batch response stored with its partition (streams/in_partitions.go): the server maps it again
		subject = base
	}
	if tok, rest, ok := wire.SplitInTenant(subject); ok {
		if rid, ok := strings.CutPrefix(rest, wire.InTenantClaimedRest); ok {
			return wire.InTenantPrefix + tok + ".response", rid
		}
	}
	return subject, ""
}

// ingest reports whether subject is one producers publish responses on.
func ingest(subject string) bool {
	if subject == streams.SubjectInResponse {
		return true
	}
	if user, ok := strings.CutPrefix(subject, wire.InAsPrefix); ok {
		user, ok = strings.CutSuffix(user, ".response")
		return ok && user != "" && !strings.Contains(user, ".")
	}
	if base, _, parted, ok := streams.SplitClaimedPartition(subject); ok && parted { // a claimed subject stored with its partition
		subject = base
	}
	if base, _, parted, ok := streams.SplitInPartition(subject); ok && parted { // a stream event or batch response stored with its partition
		subject = base
	}
	if tok, rest, ok := wire.SplitInTenant(subject); ok {
		if rest == "response" || rest == wire.InTenantBatchRest {
			return wire.TenantToken(tok) == tok || strings.HasPrefix(tok, "~")
		}
		if rid, ok := strings.CutPrefix(rest, wire.InTenantClaimedRest); ok { // a claimed subject (issue 30)
			return (wire.TenantToken(tok) == tok || strings.HasPrefix(tok, "~")) && call.ValidResponseID(rid)
		}
		rid, ok := strings.CutPrefix(rest, "stream.")
		return ok && call.ValidResponseID(rid)
	}
	rid, ok := strings.CutPrefix(subject, streams.InStreamPrefix)
	return ok && call.ValidResponseID(rid)
}
