package deploy

import (
	"slices"
	"testing"
)

// egressPorts are the TCP ports the stages' policy lets them reach, DNS
// aside.
func (r *rendered) egressPorts() []int32 {
	var ports []int32
	for _, e := range r.policies["toolgate-stages"].Spec.Egress {
		for _, p := range e.Ports {
			if p.Port.IntVal != 53 {
				ports = append(ports, p.Port.IntVal)
			}
		}
	}
	slices.Sort(ports)
	return ports
}

// An external server is reached on every port its URL names: NATS's
// comma-separated list, Redis Sentinel's sentinels (and the primary they
// name, 6379), none for a unix socket, plus networkPolicy.extraEgressPorts.
func TestHelm_external_servers_egress_on_their_urls_ports(t *testing.T) {
	ext := []string{"nats.deploy=false", "nats.monitoringEndpoint=nats.messaging.svc:8222", "redis.deploy=false"}
	for _, c := range []struct {
		sets []string
		want []int32
	}{
		{[]string{`nats.url=nats://a.example:4222\,nats://b.example:4223`, "redis.url=redis://:p%40ss@r.example/0"}, []int32{4222, 4223, 6379}},
		{[]string{"nats.url=tls://user@n.example", `redis.url=redis-sentinel://s1:26379\,s2:26380/mymaster?db=2`}, []int32{4222, 6379, 26379, 26380}},
		{[]string{"nats.url=nats://n.example:7422", "redis.url=unix:///run/redis.sock", "networkPolicy.extraEgressPorts={7000,7001}"}, []int32{7000, 7001, 7422}},
	} {
		r := helmRender(t, append(slices.Clone(ext), c.sets...)...)
		if got := r.egressPorts(); !slices.Equal(got, c.want) {
			t.Errorf("%v: the stages may reach %v, want %v", c.sets, got, c.want)
		}
	}
	if got := helmRender(t).egressPorts(); !slices.Equal(got, []int32{4222, 6379}) {
		t.Errorf("bundled: %v, want NATS's and Redis's", got)
	}
}
