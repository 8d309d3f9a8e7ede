package streams

import (
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// The claimed subjects (issue 30, "the response-id claim is the ingest
// write"): a tenant's whole interactive response is published on
// toolgate.in.t.<tenant>.response.<response-id> (wire.InTenantClaimed), in
// TOOLGATE_RESPONSES, which keeps one message per subject and refuses a
// second (MaxMsgsPerSubject 1, DiscardNewPerSubject) for ResponseIDTTL. So
// the server refuses a reused response id at publish, and no key-value
// claim is written. Responses on the other ingest subjects are claimed by
// accumulate publishing a headers-only claim message on the same subject
// (internal/ingest), so an id is claimed in one place whatever the path.

// InClaimedAll matches every claimed subject: TOOLGATE_RESPONSES'.
func InClaimedAll() string { return wire.InTenantPrefix + "*." + wire.InTenantClaimedRest + "*" }

// InTenantClaimed is the claimed subject of tenant's response responseID
// (wire.InTenantClaimed).
func InTenantClaimed(tenant, responseID string) string {
	return wire.InTenantClaimed(tenant, responseID)
}

// InSubjects are TOOLGATE_IN's subjects: the ingest subjects it really
// takes, disjoint from TOOLGATE_RESPONSES'. The shared response and
// streams, the asserting users' subjects, every five-token subject under a
// tenant (its .response and .batch, and anything else there, which
// accumulate refuses, bad_subject) and its streams. A stream's subject is
// its response id, one token (call.ValidResponseID): toolgate.in.stream.>
// and toolgate.in.t.*.stream.> of before are narrowed in place to one
// token, its messages kept, so that the partitions' ….<rid>.<k>
// (in_partitions.go) are no subject of it. Any other subject under
// toolgate.in. is stored by no stream: a publish there is refused at once
// (no responders).
func InSubjects() []string {
	return []string{
		SubjectInResponse,
		subjectInStream + "*",
		wire.InAsPrefix + "*.response",
		wire.InTenantPrefix + "*.*",
		wire.InTenantPrefix + "*.stream.*",
	}
}

// responsesConfig is TOOLGATE_RESPONSES from base: one message per subject
// kept for the claim period, a second refused (the claim), read back by
// direct get (a producer's own subjects, accumulate's), compressed (a
// response body is held 7 days: docs/design/layout.md), and no larger
// message than TOOLGATE_IN takes.
func (s Settings) responsesConfig(c jetstream.StreamConfig, maxMsg int32) jetstream.StreamConfig {
	c.MaxMsgsPerSubject = 1
	c.Discard = jetstream.DiscardNew
	c.DiscardNewPerSubject = true
	c.AllowDirect = true
	c.Compression = jetstream.S2Compression
	c.MaxMsgSize = maxMsg
	return c
}
