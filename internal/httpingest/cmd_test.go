package httpingest

import (
	"net"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestTenantsOf_flag_else_the_producer_users_tenant(t *testing.T) {
	for _, c := range []struct {
		flag, user string
		want       []string
	}{
		{"", "", []string{""}},
		{"", "producer", []string{""}},
		{"", "producer-acme", []string{"acme"}},
		{"a, b", "producer-acme", []string{"a", "b"}},
		{"*", "admin", []string{AnyTenant}},
	} {
		if got := tenantsOf(c.flag, c.user); !slices.Equal(got, c.want) {
			t.Errorf("tenantsOf(%q, %q) = %q, want %q", c.flag, c.user, got, c.want)
		}
	}
}

func TestMain_bad_flags_exit_2_and_a_taken_address_exits_1(t *testing.T) {
	env := func(string) string { return "" }
	if code := Main([]string{"--max-wait", "soon"}, env); code != 2 {
		t.Fatalf("bad flag: exit %d, want 2", code)
	}
	if code := Main([]string{"--identity-issuer", "https://x"}, env); code != 2 {
		t.Fatalf("issuer without audience: exit %d, want 2", code)
	}
	if code := Main([]string{"--nats", "nats://127.0.0.1:1"}, env); code != 1 {
		t.Fatalf("no NATS: exit %d, want 1", code)
	}
	srv := testenv.RunJetStream(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if code := Main([]string{"--nats", srv.ClientURL(), "--listen", l.Addr().String(), "--secrets", t.TempDir()}, env); code != 1 {
		t.Fatalf("taken --listen: exit %d, want 1", code)
	}
}
