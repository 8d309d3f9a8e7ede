package wire

import "strconv"

// The claimed subjects' partitions (issue 37, docs/design/layout.md
// "Partitions"). With P > 1 partitions the server maps a producer's
// claimed subject toolgate.in.t.<tenant>.response.<rid> (the public
// contract, unchanged) to toolgate.in.t.<tenant>.response.<rid>.<k>, k =
// fnv32a(tenant token + rid) mod P (an account subject mapping,
// {{partition(P,1,2)}}), stored in ResponsesStream(k). With P = 1 nothing is
// mapped: the unsuffixed subject in StreamResponses.

// ResponsesStream is the stream of claimed partition k: StreamResponses
// for k = 0 (which also keeps the unsuffixed subjects),
// TOOLGATE_RESPONSES_<k> for 1 <= k < MaxPartitions.
func ResponsesStream(k int) string {
	if k <= 0 {
		return StreamResponses
	}
	return StreamResponses + "_" + strconv.Itoa(k)
}

// ClaimedPartitionSubject is claimed subject stored in partition k: the
// subject with ".<k>" appended.
func ClaimedPartitionSubject(subject string, k int) string {
	return subject + "." + strconv.Itoa(k)
}

// ClaimedLastIn is the direct-get subject that answers the message stored
// on claimed subject in partition k (ClaimedPartitionSubject in
// ResponsesStream(k)).
func ClaimedLastIn(subject string, k int) string {
	return "$JS.API.DIRECT.GET." + ResponsesStream(k) + "." + ClaimedPartitionSubject(subject, k)
}

// ClaimedPlaces are the direct-get subjects that may answer claimed
// subject whatever P is or was: the unsuffixed subject in StreamResponses
// (P = 1), then each partition k < MaxPartitions. A reader that does not
// know P (a producer told its id is taken) asks them in turn; a stream that
// does not exist answers no responders at once.
func ClaimedPlaces(subject string) []string {
	out := []string{ClaimedLast(subject)}
	for k := range MaxPartitions {
		out = append(out, ClaimedLastIn(subject, k))
	}
	return out
}

// ClaimedMapping is the account subject mapping of the claimed subjects
// for P = p (at most MaxPartitions): toolgate.in.t.*.response.* to
// toolgate.in.t.{{wildcard(1)}}.response.{{wildcard(2)}}.{{partition(p,1,2)}};
// both "" for p <= 1 (nothing is mapped).
func ClaimedMapping(p int) (src, dest string) {
	if p <= 1 {
		return "", ""
	}
	p = min(p, MaxPartitions)
	return InTenantPrefix + "*." + InTenantClaimedRest + "*",
		InTenantPrefix + "{{wildcard(1)}}." + InTenantClaimedRest + "{{wildcard(2)}}.{{partition(" + strconv.Itoa(p) + ",1,2)}}"
}

// ClaimedLastAnywhere is the grant that lets a reader direct get claimed
// subject (a pattern: a tenant's, or every tenant's) in any partition:
// $JS.API.DIRECT.GET.*.<subject>.*. A stream token cannot be a partial
// wildcard (TOOLGATE_RESPONSES_*), so the stream is any; only the claimed
// partition streams hold a subject of this shape (seven tokens under
// toolgate.in.t.), so it reads nothing else.
func ClaimedLastAnywhere(subject string) string {
	return "$JS.API.DIRECT.GET.*." + subject + ".*"
}
