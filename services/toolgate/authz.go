package main

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/authz"
)

// authzCmd prints the least-privilege NATS users (internal/authz) as a
// nats-server configuration block:
//
//	toolgate authz render > deploy/base/nats-accounts.conf
func authzCmd(args []string) error {
	if len(args) != 1 || args[0] != "render" {
		return errors.New("authz: want render (toolgate authz render > deploy/base/nats-accounts.conf)")
	}
	conf, err := authz.Render()
	if err != nil {
		return err
	}
	fmt.Print(conf)
	return nil
}
