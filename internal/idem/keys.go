package idem

// clusterPrefix starts every key on Redis Cluster. The braces are a hash
// tag: Redis hashes only "idem", so a claim's two KEYS (the record and the
// call-id binding) and every other key of the store are in one slot, as a
// cluster requires of a script's KEYS. The record's key and the binding's
// come from different inputs (the idempotency key, the call id), so no
// finer tag would keep both in one slot; the cost is that the store lives
// on one shard (with its replicas) of the cluster.
//
// One server and Sentinel keep the untagged "toolgate:" names, so records
// written before an upgrade are still found.
const clusterPrefix = "toolgate:{idem}:"

// scriptKeys lists, for a given idempotency key and call id, every key the
// scripts are given as KEYS; the scripts touch no other key.
func (s *Redis) scriptKeys(key, callID string) []string {
	return []string{s.recKey(key), s.callKey(callID)}
}
