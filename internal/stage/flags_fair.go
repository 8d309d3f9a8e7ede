package stage

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/streams"
)

// FairFlags declares the fair-share flags (streams.Fair): --lanes
// (TOOLGATE_LANES), --tenant-weights (TOOLGATE_TENANT_WEIGHTS) and
// --tenant-priority (TOOLGATE_TENANT_PRIORITY); the tenant list is
// TOOLGATE_TENANTS (toolgate up's --tenants). It returns the function that
// reads them once fs is parsed. Every process of a deployment must be given
// the same lanes.
func FairFlags(fs *flag.FlagSet, getenv func(string) string) func() (streams.Fair, error) {
	lanes := fs.String("lanes", EnvOr(getenv, "TOOLGATE_LANES", "0"), "fairness lanes per laned stage, each an interactive and a batch durable; 0: automatic (8 with a tenant list, TOOLGATE_TENANTS; none without one); a listed tenant's lane is its place in TOOLGATE_TENANTS mod lanes, any other's a hash; every process and `toolgate authz render` must agree (TOOLGATE_LANES)")
	weights := fs.String("tenant-weights", EnvOr(getenv, "TOOLGATE_TENANT_WEIGHTS", ""), "tenants' shares of each laned stage, tenant=weight,... (default 1 each; TOOLGATE_TENANT_WEIGHTS)")
	parts := fs.Int("partitions", envInt(getenv, "TOOLGATE_PARTITIONS", streams.DefaultPartitions), "partitions of the gate stages' streams: a call's hops go to partition fnv32a(tenant, response id) mod P, each a stream of its own per stage (its own leader in a cluster); 1: the layout without partitions; workers read every partition stream that exists, so P may change while calls wait; every publisher, `toolgate streams apply` and `toolgate authz render` must agree (TOOLGATE_PARTITIONS)")
	prio := fs.String("tenant-priority", EnvOr(getenv, "TOOLGATE_TENANT_PRIORITY", ""), "tenants' default priority when a response sends no Toolgate-Priority, tenant=interactive|batch,... (default interactive; TOOLGATE_TENANT_PRIORITY)")
	return func() (streams.Fair, error) {
		f, err := ParseFair(*lanes, getenv("TOOLGATE_TENANTS"), *weights, *prio)
		if err != nil {
			return f, err
		}
		if *parts < 1 || *parts > streams.MaxPartitions {
			return f, fmt.Errorf("--partitions %d: want 1 to %d", *parts, streams.MaxPartitions)
		}
		f.Partitions = *parts
		return f, nil
	}
}

// envInt is the number in getenv(key), def when unset or not a number
// (the flag's check then says what is wrong with def's replacement).
func envInt(getenv func(string) string, key string, def int) int {
	v := strings.TrimSpace(getenv(key))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1 // refused by the range check, naming the flag
	}
	return n
}

// ParseFair reads the fair-share settings as the flags give them.
func ParseFair(lanes, tenants, weights, priority string) (streams.Fair, error) {
	var f streams.Fair
	n, err := strconv.Atoi(strings.TrimSpace(lanes))
	if err != nil || n < 0 || n > streams.MaxLanes {
		return f, fmt.Errorf("--lanes %q: want a number of lanes from 0 (automatic) to %d, such as %d", lanes, streams.MaxLanes, streams.DefaultLanes)
	}
	f.Lanes, f.Tenants = n, SplitList(tenants)
	pairs, err := parsePairs("--tenant-weights", weights)
	if err != nil {
		return f, err
	}
	for t, v := range pairs {
		w, err := strconv.Atoi(v)
		if err != nil || w < 1 || w > 1000 {
			return f, fmt.Errorf("--tenant-weights: tenant %q: want a weight from 1 to 1000, got %q", t, v)
		}
		if f.Weights == nil {
			f.Weights = map[string]int{}
		}
		f.Weights[t] = w
	}
	if f.Priority, err = parsePairs("--tenant-priority", priority); err != nil {
		return f, err
	}
	for t, p := range f.Priority {
		if p != streams.PriorityInteractive && p != streams.PriorityBatch {
			return f, fmt.Errorf("--tenant-priority: tenant %q: want %s or %s, got %q", t, streams.PriorityInteractive, streams.PriorityBatch, p)
		}
	}
	return f, nil
}

// parsePairs reads k=v,k=v.
func parsePairs(flag, s string) (map[string]string, error) {
	var out map[string]string
	for _, item := range SplitList(s) {
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s: %q: want tenant=value", flag, item)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out, nil
}
