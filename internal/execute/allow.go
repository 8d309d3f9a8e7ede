package execute

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrDestination: an HTTP executor's URL leads somewhere the execute stage's
// allowlist does not allow. It comes wrapped in ErrNotRun: nothing was sent.
var ErrDestination = errors.New("execute: HTTP executor destination not allowed")

// Destinations is the execute stage's allowlist of HTTP executor
// destinations (--exec-allow, TOOLGATE_EXEC_ALLOW): a comma list of
// hostnames (any port), host:port, IPs, IP:port and CIDRs, and "*" for any
// public address. It is checked when the connection is dialled, on the
// address DNS resolved to, so a name that resolves elsewhere later (DNS
// rebinding) cannot slip past it:
//   - an address inside an IP or CIDR entry (and its port, if it names one)
//     is allowed;
//   - any other loopback, private (RFC 1918, ULA), link-local (169.254/16,
//     the cloud metadata address among them), unspecified, CGNAT,
//     multicast, broadcast, reserved or NAT64/6to4 address is refused, even
//     when a hostname entry matched;
//   - a public address is allowed when the URL's host matches a hostname
//     entry (and its port), or when "*" is listed.
//
// A nil or empty list allows nothing: every HTTP executor is refused until
// the operator lists its destination. Proxies from the environment are not
// used (the proxy's address would be checked instead of the tool's).
type Destinations struct {
	anyPublic bool
	nets      []destNet
	names     []destName
	client    *http.Client
}

type destNet struct {
	prefix netip.Prefix
	port   uint16 // 0: any
}

type destName struct {
	host string
	port uint16 // 0: any
}

// ParseDestinations reads --exec-allow.
func ParseDestinations(list string) (*Destinations, error) {
	d := &Destinations{}
	for _, raw := range strings.Split(list, ",") {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if e == "*" {
			d.anyPublic = true
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("execute: --exec-allow %q: not a CIDR such as 10.0.0.0/8: %v", raw, err)
			}
			d.nets = append(d.nets, destNet{prefix: p.Masked()})
			continue
		}
		host, port := e, uint16(0)
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			d.nets = append(d.nets, destNet{prefix: single(a)})
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			n, perr := strconv.ParseUint(p, 10, 16)
			if perr != nil || n == 0 {
				return nil, fmt.Errorf("execute: --exec-allow %q: port %q is not 1-65535", raw, p)
			}
			host, port = h, uint16(n)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			d.nets = append(d.nets, destNet{prefix: single(a), port: port})
			continue
		}
		host = strings.TrimSuffix(host, ".")
		if !hostname(host) {
			return nil, fmt.Errorf("execute: --exec-allow %q: want a hostname, host:port, IP, IP:port, CIDR or *", raw)
		}
		d.names = append(d.names, destName{host: host, port: port})
	}
	d.client = d.newClient()
	return d, nil
}

// single is the prefix of one address.
func single(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen())
}

func hostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// Empty reports whether nothing is allowed.
func (d *Destinations) Empty() bool {
	return d == nil || !d.anyPublic && len(d.nets) == 0 && len(d.names) == 0
}

// nameAllowed reports whether host:port matches a hostname entry.
func (d *Destinations) nameAllowed(host string, port uint16) bool {
	if d == nil {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, n := range d.names {
		if n.host == host && (n.port == 0 || n.port == port) {
			return true
		}
	}
	return false
}

// permits decides one dialled address; named says a hostname entry matched
// the URL's host.
func (d *Destinations) permits(ip netip.Addr, port uint16, named bool) bool {
	if d == nil {
		return false
	}
	ip = ip.Unmap()
	for _, n := range d.nets {
		if n.prefix.Contains(ip) && (n.port == 0 || n.port == port) {
			return true
		}
	}
	if special(ip) {
		return false
	}
	return named || d.anyPublic
}

// special reports addresses that reach the host itself, its networks or
// its cloud's services rather than the public internet.
func special(ip netip.Addr) bool {
	// IsPrivate: RFC 1918 and ULA (fd00:ec2::254 is a metadata address);
	// IsLinkLocalUnicast: 169.254/16 (the metadata address) and fe80::/10.
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || !ip.IsValid() {
		return true
	}
	for _, p := range specialPrefixes() {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func specialPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",      // this network
		"100.64.0.0/10",  // CGNAT (and some clouds' metadata, 100.100.100.200)
		"192.0.0.0/24",   // IETF protocol assignments
		"192.88.99.0/24", // 6to4 relay anycast
		"198.18.0.0/15",  // benchmarking
		"240.0.0.0/4",    // reserved, and 255.255.255.255
		"64:ff9b::/96",   // NAT64: reaches IPv4 addresses, private ones too
		"64:ff9b:1::/48", // local NAT64
		"2002::/16",      // 6to4: embeds an IPv4 address
		"fec0::/10",      // site-local (deprecated)
		"100::/64",       // discard
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// refused is the error a refused dial returns.
func (d *Destinations) refused(host string, addr netip.AddrPort) error {
	what := "it is not in the execute stage's allowlist"
	if special(addr.Addr().Unmap()) {
		what = "a loopback, private, link-local or other non-public address needs an IP or CIDR entry in the execute stage's allowlist"
	}
	if d.Empty() {
		what = "the execute stage has no allowlist of HTTP executor destinations"
	}
	return fmt.Errorf("%w: %s (%s): %s; add it with --exec-allow or TOOLGATE_EXEC_ALLOW on the execute stage (a comma list of hostnames, host:port, IPs, CIDRs, or * for any public address)",
		ErrDestination, host, addr, what)
}

// dial connects to addr only where d allows, checking the resolved address.
func (d *Destinations) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDestination, addr, err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: port: %v", ErrDestination, addr, err)
	}
	named := d.nameAllowed(host, uint16(n))
	dialer := &net.Dialer{
		Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrDestination, address, err)
			}
			if !d.permits(ap.Addr(), ap.Port(), named) {
				return d.refused(host, ap)
			}
			return nil
		},
	}
	return dialer.DialContext(ctx, network, addr)
}

// Client is the HTTP client of HTTP executors under d: it dials only where
// d allows, uses no proxy and follows no redirect. A parsed Destinations
// keeps one (and its connection pool); a nil one allows nothing.
func (d *Destinations) Client() *http.Client {
	if d != nil && d.client != nil {
		return d.client
	}
	return d.newClient()
}

func (d *Destinations) newClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = d.dial
	tr.DialTLSContext = nil
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// String lists the entries as given, normalized.
func (d *Destinations) String() string {
	if d.Empty() {
		return "(none)"
	}
	var s []string
	if d.anyPublic {
		s = append(s, "*")
	}
	for _, n := range d.nets {
		if n.port != 0 {
			s = append(s, netip.AddrPortFrom(n.prefix.Addr(), n.port).String())
		} else {
			s = append(s, n.prefix.String())
		}
	}
	for _, n := range d.names {
		if n.port != 0 {
			s = append(s, net.JoinHostPort(n.host, strconv.Itoa(int(n.port))))
		} else {
			s = append(s, n.host)
		}
	}
	return strings.Join(s, ",")
}
