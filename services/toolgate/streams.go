package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/streams"
)

// streamsCmd applies the declared streams, buckets and consumers.
func streamsCmd(args []string) error {
	if len(args) == 0 || args[0] != "apply" {
		return errors.New("streams: want apply")
	}
	fs := flag.NewFlagSet("streams apply", flag.ExitOnError)
	url := natsFlag(fs)
	defReplicas, err := strconv.Atoi(env("TOOLGATE_STREAM_REPLICAS", "1"))
	if err != nil {
		return fmt.Errorf("streams: TOOLGATE_STREAM_REPLICAS: want a number of replicas (1 or 3): %w", err)
	}
	replicas := fs.Int("replicas", defReplicas, "stream and bucket replicas, 3 on a production cluster (TOOLGATE_STREAM_REPLICAS)")
	fs.Parse(args[1:])
	nc, js, err := connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	s := streams.DefaultSettings()
	s.Replicas = *replicas
	if err := streams.Ensure(ctx, js, s); err != nil {
		return err
	}
	fmt.Println("streams, buckets and consumers applied")
	return nil
}

// probe exits 0 when URL answers 200: the container healthcheck, since the
// runtime image has no shell or curl.
func probe(args []string) error {
	if len(args) != 1 {
		return errors.New("probe: want one URL")
	}
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(args[0])
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s answered %s", args[0], resp.Status)
	}
	return nil
}
