package identity

import (
	"context"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzVerify_never_panics: any token is refused or verified, never a panic,
// and an edit of a valid token never verifies as another identity.
func FuzzVerify_never_panics(f *testing.F) {
	is := newIssuer(f)
	v, err := New(context.Background(), is.config(f, is.jwks))
	if err != nil {
		f.Fatal(err)
	}
	good := is.sign(f, jwt.SigningMethodES256, "k2", is.claims())
	for _, s := range []string{good, "", "a.b.c", "..", "eyJhbGciOiJub25lIn0.e30.", strings.Repeat(".", 100), good[:len(good)-3]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := v.Verify(context.Background(), tok)
		if err == nil && (id.Principal != "alice" || id.Tenant != "acme") {
			t.Fatalf("%q verified as %+v", tok, id)
		}
	})
}
