package wire

import "strconv"

// TOOLGATE_IN's partitions (issue 37, docs/design/layout.md "Partitions").
// With P > 1 partitions the server maps, as it maps the claimed subjects
// (ClaimedMapping), a stream's events by response id, so a stream's events
// stay in one partition and in order, in the partition of its claim:
// toolgate.in.t.<tenant>.stream.<rid> to ….<rid>.<k>, k = fnv32a(tenant
// token + rid) mod P; the shared toolgate.in.stream.<rid> to ….<rid>.<k>,
// k = fnv32a(rid) mod P; and a tenant's batch whole responses by tenant,
// toolgate.in.t.<tenant>.batch to ….batch.<k>, k = fnv32a(tenant token)
// mod P. Partition 0 is StreamIn, which keeps the unsuffixed subjects;
// partition k >= 1 is InputStream(k). With P = 1 nothing is mapped.

// StreamIn is the stream of the ingest subjects that are not claimed
// (partition 0 of them).
const StreamIn = "TOOLGATE_IN"

// InputStream is the stream of TOOLGATE_IN's partition k: StreamIn for
// k = 0, TOOLGATE_IN_<k> for 1 <= k < MaxPartitions.
func InputStream(k int) string {
	if k <= 0 {
		return StreamIn
	}
	return StreamIn + "_" + strconv.Itoa(k)
}

// Mapping is one account subject mapping: a publish on Src is stored on
// Dest.
type Mapping struct{ Src, Dest string }

// Mappings are every account subject mapping of P = p (at most
// MaxPartitions): the claimed subjects' (ClaimedMapping), a tenant's
// streams', the shared streams' and a tenant's batch subject's; none for
// p <= 1.
func Mappings(p int) []Mapping {
	if p <= 1 {
		return nil
	}
	p = min(p, MaxPartitions)
	n := strconv.Itoa(p)
	src, dest := ClaimedMapping(p)
	return []Mapping{
		{src, dest},
		{InTenantPrefix + "*.stream.*", InTenantPrefix + "{{wildcard(1)}}.stream.{{wildcard(2)}}.{{partition(" + n + ",1,2)}}"},
		{InStreamPrefix + "*", InStreamPrefix + "{{wildcard(1)}}.{{partition(" + n + ",1)}}"},
		{InTenantPrefix + "*." + InTenantBatchRest, InTenantPrefix + "{{wildcard(1)}}." + InTenantBatchRest + ".{{partition(" + n + ",1)}}"},
	}
}
