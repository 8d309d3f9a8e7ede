package main

import (
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"
)

// streamsCmd applies the declared streams, buckets and consumers.
func streamsCmd(args []string) error {
	if len(args) == 0 || args[0] != "apply" {
		return usageError("streams: want apply")
	}
	fs := withUsage(flag.NewFlagSet("streams apply", flag.ContinueOnError), "streams", "apply")
	url := natsFlag(fs)
	defReplicas, err := strconv.Atoi(env("TOOLGATE_STREAM_REPLICAS", "1"))
	if err != nil {
		return fmt.Errorf("streams: TOOLGATE_STREAM_REPLICAS: want a number of replicas (1 or 3): %w", err)
	}
	replicas := fs.Int("replicas", defReplicas, "stream and bucket replicas, 3 on a production cluster (TOOLGATE_STREAM_REPLICAS)")
	lanes := fs.Int("lanes", envInt("TOOLGATE_LANES", streams.DefaultLanes), "fairness lanes per laned stage, a durable each for interactive and batch calls; every stage must be given the same (TOOLGATE_LANES)")
	ops, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return usageError("streams apply takes no operands (got %q)", ops[0])
	}
	nc, js, err := connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	s := streams.DefaultSettings()
	s.Replicas = *replicas
	if *lanes < 1 || *lanes > streams.MaxLanes {
		return usageError("streams apply: --lanes %d: want 1 to %d", *lanes, streams.MaxLanes)
	}
	s.Fair.Lanes = *lanes
	s.Fair.Tenants = stage.SplitList(env("TOOLGATE_TENANTS", "")) // accumulate's lanes filter on the listed tenants' subjects
	if err := streams.Ensure(ctx, js, s); err != nil {
		return err
	}
	fmt.Println("streams, buckets and consumers applied")
	return nil
}

// probe exits 0 when URL answers 200: the container healthcheck, since the
// runtime image has no shell or curl.
func probe(args []string) error {
	fs := withUsage(flag.NewFlagSet("probe", flag.ContinueOnError), "probe", "")
	wait := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	ops, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return usageError("probe: want one URL, e.g. toolgate probe http://127.0.0.1:8080/readyz")
	}
	c := http.Client{Timeout: *wait}
	resp, err := c.Get(ops[0])
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s answered %s", ops[0], resp.Status)
	}
	return nil
}
