package execute

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// loopback allows the test servers of httptest (127.0.0.1).
func loopback(t *testing.T) *Destinations {
	t.Helper()
	return mustAllow(t, "127.0.0.1,::1")
}

func mustAllow(t *testing.T, list string) *Destinations {
	t.Helper()
	d, err := ParseDestinations(list)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// countingServer is a tool on 127.0.0.1 that counts the requests reaching it.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, `{"ok":true,"result":"ran"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestTrust_http_executor_destination_allowlist(t *testing.T) {
	srv, hits := countingServer(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	refused := func(t *testing.T, h *HTTP) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := h.Execute(ctx, req())
		if !errors.Is(err, ErrDestination) || !errors.Is(err, ErrNotRun) {
			t.Fatalf("%s: error %v, want ErrNotRun with ErrDestination (nothing sent)", h.URL, err)
		}
		if !strings.Contains(err.Error(), "--exec-allow") || !strings.Contains(err.Error(), "TOOLGATE_EXEC_ALLOW") {
			t.Fatalf("error %q does not say which setting allows it", err)
		}
	}
	t.Run("loopback_refused_without_an_allowlist", func(t *testing.T) {
		refused(t, &HTTP{URL: srv.URL})
		refused(t, &HTTP{URL: srv.URL, Allow: mustAllow(t, "")})
	})
	t.Run("loopback_refused_by_a_public_wildcard_or_a_name", func(t *testing.T) {
		refused(t, &HTTP{URL: srv.URL, Allow: mustAllow(t, "*")})
		// localhost is listed by name, but resolves to loopback: a name
		// entry never covers a non-public address (DNS rebinding).
		refused(t, &HTTP{URL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), Allow: mustAllow(t, "localhost")})
	})
	t.Run("loopback_refused_on_another_port", func(t *testing.T) {
		refused(t, &HTTP{URL: srv.URL, Allow: mustAllow(t, "127.0.0.1:1")})
	})
	t.Run("metadata_and_private_refused", func(t *testing.T) {
		for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.1.2.3:8080/charge", "http://[fd00:ec2::254]/", "http://100.100.100.200/", "http://0.0.0.0:" + port + "/"} {
			refused(t, &HTTP{URL: u, Allow: mustAllow(t, "*,billing.example.com")})
		}
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the tool on 127.0.0.1 received %d requests from refused destinations, want 0", n)
	}
	t.Run("listed_loopback_allowed", func(t *testing.T) {
		for _, list := range []string{"127.0.0.1", "127.0.0.1:" + port, "127.0.0.0/8"} {
			got, err := (&HTTP{URL: srv.URL, Allow: mustAllow(t, list)}).Execute(context.Background(), req())
			if err != nil || !got.OK {
				t.Fatalf("--exec-allow %s: %+v %v, want the call run", list, got, err)
			}
		}
		if n := hits.Load(); n != 3 {
			t.Fatalf("the tool received %d requests, want 3", n)
		}
	})
	t.Run("listed_metadata_and_private_are_dialled", func(t *testing.T) {
		for _, c := range []struct{ url, allow string }{
			{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
			{"http://10.1.2.3:8080/charge", "10.0.0.0/8"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := (&HTTP{URL: c.url, Allow: mustAllow(t, c.allow)}).Execute(ctx, req())
			cancel()
			if errors.Is(err, ErrDestination) {
				t.Fatalf("%s with --exec-allow %s: refused: %v", c.url, c.allow, err)
			}
		}
	})
}

func TestHTTP_redirect_to_another_host_is_not_followed(t *testing.T) {
	other, hits := countingServer(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	got, err := (&HTTP{URL: srv.URL, Allow: loopback(t)}).Execute(context.Background(), req())
	if err != nil || got.OK || hits.Load() != 0 {
		t.Fatalf("reply %+v, %v, redirect target hit %d times: want a failed call and no request elsewhere", got, err, hits.Load())
	}
}

func TestDestinations_parse_and_decide(t *testing.T) {
	d := mustAllow(t, " Billing.Example.com ,api.example.com:8443,10.9.0.0/16,192.168.1.7:9000,[::1]:8080,fd12::1 ")
	if got := d.String(); got != "10.9.0.0/16,192.168.1.7:9000,[::1]:8080,fd12::1/128,billing.example.com,api.example.com:8443" {
		t.Fatalf("String() = %s", got)
	}
	pub := netip.MustParseAddr("93.184.216.34")
	for _, c := range []struct {
		name  string
		ip    string
		port  uint16
		named bool
		want  bool
	}{
		{"public by name", pub.String(), 443, true, true},
		{"public not named", pub.String(), 443, false, false},
		{"private in a CIDR", "10.9.3.4", 80, false, true},
		{"private outside the CIDR", "10.8.3.4", 80, true, false},
		{"ip:port on its port", "192.168.1.7", 9000, false, true},
		{"ip:port on another port", "192.168.1.7", 9001, false, false},
		{"v6 loopback on its port", "::1", 8080, false, true},
		{"v6 loopback elsewhere", "::1", 8081, false, false},
		{"v4-mapped private", "::ffff:10.9.0.1", 80, false, true},
		{"v4-mapped metadata by name", "::ffff:169.254.169.254", 80, true, false},
		{"ULA listed", "fd12::1", 1, false, true},
		{"NAT64 of private", "64:ff9b::a00:1", 80, true, false},
		{"CGNAT by name", "100.64.0.1", 80, true, false},
		{"broadcast by name", "255.255.255.255", 80, true, false},
		{"multicast by name", "224.0.0.1", 80, true, false},
	} {
		if got := d.permits(netip.MustParseAddr(c.ip), c.port, c.named); got != c.want {
			t.Errorf("%s: permits(%s:%d, named %v) = %v, want %v", c.name, c.ip, c.port, c.named, got, c.want)
		}
	}
	if !d.nameAllowed("billing.example.com.", 1) || !d.nameAllowed("API.example.com", 8443) || d.nameAllowed("api.example.com", 443) || d.nameAllowed("evil.com", 443) {
		t.Error("hostname entries match wrongly")
	}
	for _, bad := range []string{"10.0.0.0/33", "host:0", "host:99999", "exa mple.com", "http://x.com"} {
		if _, err := ParseDestinations(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var none *Destinations
	if !none.Empty() || none.permits(pub, 443, true) || none.String() != "(none)" {
		t.Error("a nil allowlist allows something")
	}
}
