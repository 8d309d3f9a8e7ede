package bench

// NATSPlace is where the bench's nats-server runs, which says what this
// process's memory and CPU include.
type NATSPlace int

const (
	// NATSEmbedded: in this process, so its RSS and CPU are in the
	// process's and cannot be told apart.
	NATSEmbedded NATSPlace = iota
	// NATSChild: a nats-server child process: its peak RSS is printed
	// apart and its CPU added to the process's.
	NATSChild
	// NATSExternal: a server elsewhere (--nats URL): neither measured.
	NATSExternal
	// NATSCluster: three nats-server child processes clustered by routes,
	// every stream and bucket on all three (R3): their peak RSS is printed
	// apart and their CPU added to the process's.
	NATSCluster
)

// MarshalText writes the place by name in the --json report.
func (p NATSPlace) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

func (p NATSPlace) String() string {
	switch p {
	case NATSChild:
		return "child process"
	case NATSExternal:
		return "external"
	case NATSCluster:
		return "3-node cluster"
	}
	return "embedded"
}

// CPUWhat says whose CPU time a CPU figure sums.
func (p NATSPlace) CPUWhat() string {
	switch p {
	case NATSChild:
		return "process + redis-server + nats-server"
	case NATSExternal:
		return "process + redis-server; the external nats-server not counted"
	case NATSCluster:
		return "process + redis-server + the three nats-servers"
	}
	return "process + redis-server"
}
