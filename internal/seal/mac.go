package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/toolgate/toolgate/internal/call"
)

// version tags what a MAC covers; a change to the covered content is a new
// version, so old seals never verify against a new meaning.
const version = "toolgate-seal/v1"

// macText is the MAC of seal s on envelope e as a seal writes it (base64url,
// no padding), chained to the seal before it (prev: its MAC, "" for the
// first). It covers every field of s but MAC, the envelope's response id,
// request (tenant, principal, roles, dry run, tolerance, conversation,
// identity) and batch, and prev. A carrier's seal (carrier) covers only the
// batch's id and atomicity: the calls recovered from it are numbered by the
// parse gate.
func macText(k Key, s call.Seal, e *call.Envelope, prev string, carrier bool) string {
	m := k.state()
	defer k.done(m)
	var out [macTextLen]byte
	base64.RawURLEncoding.Encode(out[:], m.sum(s, e, prev, carrier))
	return string(out[:])
}

// macTextLen is the length of a MAC's text: base64url of 32 bytes.
const macTextLen = 43

// macMatches reports, in constant time, whether text is the MAC of seal s
// as a seal writes it.
func macMatches(text string, k Key, s call.Seal, e *call.Envelope, prev string, carrier bool) bool {
	m := k.state()
	defer k.done(m)
	sum := m.sum(s, e, prev, carrier)
	var want [macTextLen]byte
	base64.RawURLEncoding.Encode(want[:], sum)
	return hmac.Equal(want[:], stringBytes(text))
}

// sum is the MAC of seal s on e (see macText), in m's own buffer: valid until m
// is used again.
func (m *macState) sum(s call.Seal, e *call.Envelope, prev string, carrier bool) []byte {
	r := e.Request
	b := m.buf[:0]
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
	if cap(b) <= maxKeptBuffer {
		m.buf = b // grown to fit: the next seal appends without growing
	}
	m.h.Reset()
	m.h.Write(b)
	m.out = m.h.Sum(m.out[:0])
	return m.out
}

// maxKeptBuffer bounds the buffer a pooled state keeps: a hostile envelope
// with long fields gets a buffer of its own, not one every later seal holds.
const maxKeptBuffer = 4 << 10

// macState is an HMAC-SHA256 state keyed with one key's secret and the
// buffers a seal needs: its covered bytes and its MAC. A state is Reset to
// its keyed start before each use, so a seal costs no new state, no hashing
// of the key's pads and no allocation but its own text: ten MACs a call
// (five seals, five checks).
type macState struct {
	h   hash.Hash
	buf []byte
	out []byte
}

func macPool(secret []byte) *sync.Pool {
	return &sync.Pool{New: func() any {
		return &macState{h: hmac.New(sha256.New, secret), buf: make([]byte, 0, 512), out: make([]byte, 0, sha256.Size)}
	}}
}

// state is a keyed state of k from its pool; a fresh one for a Key not
// made by New.
func (k Key) state() *macState {
	if k.macs == nil {
		return &macState{h: hmac.New(sha256.New, k.Secret)}
	}
	return k.macs.Get().(*macState)
}

func (k Key) done(m *macState) {
	if k.macs != nil {
		k.macs.Put(m)
	}
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
