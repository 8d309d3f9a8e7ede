package call

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of the hop encoding (hop.go). A number is never reused for
// another meaning: a field that goes away keeps its number reserved, and a
// new field takes a new number, which older readers skip.
const (
	fCallID         protowire.Number = 1
	fResponseID     protowire.Number = 2
	fProviderCallID protowire.Number = 3
	fProviderKind   protowire.Number = 4
	fProvider       protowire.Number = 5
	fModel          protowire.Number = 6
	fSource         protowire.Number = 7
	fToolName       protowire.Number = 8
	fRawArguments   protowire.Number = 9
	fFinishReason   protowire.Number = 10
	fProviderFinish protowire.Number = 11
	fStatus         protowire.Number = 12
	fFailure        protowire.Number = 13
	fArguments      protowire.Number = 14
	fErrors         protowire.Number = 15
	fRepairAttempts protowire.Number = 16
	fReplays        protowire.Number = 17
	fRepairs        protowire.Number = 18
	fToolRevision   protowire.Number = 19
	fValidTools     protowire.Number = 20
	fTruncatedHint  protowire.Number = 21
	fReview         protowire.Number = 22
	fCarrier        protowire.Number = 23
	fText           protowire.Number = 24
	fIdempotencyKey protowire.Number = 25
	fResult         protowire.Number = 26
	fBatch          protowire.Number = 27
	fRequest        protowire.Number = 28
	fCreatedAt      protowire.Number = 29
	fHistory        protowire.Number = 30
	fApproval       protowire.Number = 31
	fSeals          protowire.Number = 32
)

// wireTypes says which wire type each known field number of a message has;
// false: a number this version does not know (skipped).
type wireTypes func(protowire.Number) (protowire.Type, bool)

// typeOf is the wire type of field n of a message with fields 1..last, of
// which the varint ones are varint and the others length-delimited.
func typeOf(n, last protowire.Number, varint bool) (protowire.Type, bool) {
	switch {
	case n < 1 || n > last:
		return 0, false
	case varint:
		return protowire.VarintType, true
	}
	return protowire.BytesType, true
}

func envelopeTypes(n protowire.Number) (protowire.Type, bool) {
	return typeOf(n, fSeals, n == fRepairAttempts || n == fReplays || n == fToolRevision || n == fCarrier)
}
func repairTypes(n protowire.Number) (protowire.Type, bool)   { return typeOf(n, 6, n == 1) }
func batchTypes(n protowire.Number) (protowire.Type, bool)    { return typeOf(n, 4, n >= 2) }
func requestTypes(n protowire.Number) (protowire.Type, bool)  { return typeOf(n, 8, n == 5 || n == 6) }
func stepTypes(n protowire.Number) (protowire.Type, bool)     { return typeOf(n, 4, false) }
func decisionTypes(n protowire.Number) (protowire.Type, bool) { return typeOf(n, 3, false) }
func sealTypes(n protowire.Number) (protowire.Type, bool)     { return typeOf(n, 10, n == 7) }
