package stage

import (
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// testExecSigner is the executor signing key of the stage tests: derived
// from a fixed seed, so the execute processes a test starts (TestMain) sign
// with the key its toolservers verify with.
func testExecSigner() *execute.Signer {
	seed := sha256.Sum256([]byte("toolgate stage tests: executor signing key"))
	s, err := execute.NewSigner(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		panic(err)
	}
	return s
}

// testExecKey makes a toolserver verify with testExecSigner's public key.
func testExecKey() toolserver.Option { return toolserver.PublicKey(testExecSigner().Public()...) }

// allowLoopback lets HTTP executors reach httptest servers on 127.0.0.1.
func allowLoopback(t *testing.T) *execute.Destinations {
	t.Helper()
	d, err := execute.ParseDestinations("127.0.0.1,::1")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
