package deploy

import (
	"flag"
	"fmt"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/keygen"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// SecretsCmd makes the secrets of a deployment (internal/keygen) in a
// directory, keeping those that exist:
//
//	toolgate secrets init deploy/base/secrets      # kubectl apply -k deploy/base
//	toolgate secrets init .toolgate/compose        # docker compose --env-file .toolgate/compose/compose.env up
func SecretsCmd(args []string) error {
	if len(args) < 1 || args[0] != "init" {
		return cmdutil.UsageError("secrets: want init DIR (toolgate secrets init [--executor-groups G=T,T;G=T] [--tenants A,B] DIR)")
	}
	fs := cmdutil.WithUsage(flag.NewFlagSet("secrets init", flag.ContinueOnError), "secrets", "init")
	groups := fs.String("executor-groups", cmdutil.Env("TOOLGATE_EXECUTOR_GROUPS", authz.DefaultGroups()), "executor groups: group=tool,tool;group=tool (TOOLGATE_EXECUTOR_GROUPS); the same as authz render's")
	tenants := fs.String("tenants", cmdutil.Env("TOOLGATE_TENANTS", ""), "tenants with a producer user each (TOOLGATE_TENANTS, comma-separated)")
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return cmdutil.UsageError("secrets: init wants one directory, e.g. toolgate secrets init deploy/base/secrets")
	}
	g, err := authz.ParseGroups(*groups)
	if err != nil {
		return err
	}
	c := authz.Config{Groups: g, Tenants: authz.ParseTenants(*tenants)}
	dir := ops[0]
	if err := keygen.Init(dir, c); err != nil {
		return err
	}
	for _, f := range keygen.Files(c) {
		fmt.Printf("%s/%s\n", dir, f)
	}
	return nil
}
