package call

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/canon"
)

// The gates after parse seal the hash of the argument bytes they carry and
// execute demands it equal to the canonical form's hash parse sealed
// (internal/seal): so both hop encodings must carry canonical arguments
// byte for byte, escapes, numbers and all.
func TestEnvelope_hops_carry_canonical_arguments_byte_for_byte(t *testing.T) {
	in := `{"s":"\u0001\b\f\n\r\t\u2028\u2029\"\\/é<>&","n":1.50,"big":12345678901234567890,"e":1E5,"u":"\ud83d\ude00","a":[{"z":null,"y":true}]}`
	c, err := canon.JSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	e := New("resp-1", 0, time.Unix(1700000000, 0))
	e.Arguments = c
	js, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"json": js, "hop": e.MarshalHop()} {
		d, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(d.Arguments) != string(c) {
			t.Errorf("%s hop: %s arrived as %s", name, c, d.Arguments)
		}
	}
}
