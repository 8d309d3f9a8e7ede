package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/toolgate/toolgate/internal/call"
)

// version tags what a MAC covers; a change to the covered content is a new
// version, so old seals never verify against a new meaning.
const version = "toolgate-seal/v1"

// mac is the MAC of seal s on envelope e, chained to the seal before it
// (prev: its MAC, "" for the first). It covers every field of s but MAC,
// the envelope's response id, request (tenant, principal, roles, dry run,
// tolerance, conversation, identity) and batch, and prev. A carrier's seal
// (carrier) covers only the batch's id and atomicity: the calls recovered
// from it are numbered by the parse gate.
func mac(k Key, s call.Seal, e *call.Envelope, prev string, carrier bool) []byte {
	r := e.Request
	n := 128 + len(s.Key) + len(s.Stage) + len(s.Status) + len(s.Call) + len(s.Tool) + len(s.Raw) + len(s.Args) + len(s.Approval) +
		len(e.ResponseID) + len(r.Tenant) + len(r.Principal) + len(r.Conversation) + len(r.Identity) + len(e.Batch.ID) + len(prev)
	for _, role := range r.Roles {
		n += 4 + len(role)
	}
	b := make([]byte, 0, n) // one allocation: this runs at every gate
	b = field(b, version)
	b = field(b, s.Key)
	b = field(b, s.Stage)
	b = field(b, string(s.Status))
	b = field(b, s.Call)
	b = field(b, s.Tool)
	b = field(b, s.Raw)
	b = field(b, s.Args)
	b = binary.BigEndian.AppendUint64(b, s.Rev)
	b = field(b, s.Approval)
	b = field(b, e.ResponseID)
	b = field(b, r.Tenant)
	b = field(b, r.Principal)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Roles)))
	for _, role := range r.Roles {
		b = field(b, role)
	}
	b = field(b, r.Conversation)
	b = field(b, r.Identity)
	b = flag(b, r.Tolerant)
	b = flag(b, r.DryRun)
	b = flag(b, carrier)
	b = field(b, e.Batch.ID)
	if !carrier {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Batch.Index))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Batch.Size))
	}
	b = flag(b, e.Batch.Atomic)
	b = field(b, prev)
	return k.sum(b)
}

// macPool hands out HMAC-SHA256 states keyed with secret. A state is Reset
// to its keyed start before each use, so a seal costs no new state and no
// hashing of the key's pads: ten MACs a call (five seals, five checks).
func macPool(secret []byte) *sync.Pool {
	return &sync.Pool{New: func() any { return hmac.New(sha256.New, secret) }}
}

// sum is the HMAC-SHA256 of b under k.
func (k Key) sum(b []byte) []byte {
	if k.macs == nil { // a Key not made by New
		h := hmac.New(sha256.New, k.Secret)
		h.Write(b)
		return h.Sum(nil)
	}
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(b)
	out := h.Sum(nil)
	k.macs.Put(h)
	return out
}

// field appends s with its length, so no two sequences of fields encode
// alike.
func field(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func flag(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}
