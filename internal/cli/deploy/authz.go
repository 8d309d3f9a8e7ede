package deploy

import (
	"flag"
	"fmt"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// AuthzCmd prints the least-privilege NATS users (internal/authz) as a
// nats-server configuration block, for the executor groups and tenants of
// the deployment:
//
//	toolgate authz render > deploy/base/nats-accounts.conf
//	toolgate authz render --executor-groups 'payments=create_invoice,refund;accounts=delete_customer_account' --tenants acme,globex
func AuthzCmd(args []string) error {
	if len(args) < 1 || args[0] != "render" {
		return cmdutil.UsageError("authz: want render (toolgate authz render [--executor-groups G=T,T;G=T] [--tenants A,B] > deploy/base/nats-accounts.conf)")
	}
	fs := cmdutil.WithUsage(flag.NewFlagSet("authz render", flag.ContinueOnError), "authz", "render")
	groups := fs.String("executor-groups", cmdutil.Env("TOOLGATE_EXECUTOR_GROUPS", authz.DefaultGroups()), "executor groups: group=tool,tool;group=tool (TOOLGATE_EXECUTOR_GROUPS)")
	tenants := fs.String("tenants", cmdutil.Env("TOOLGATE_TENANTS", ""), "tenants with a producer user each (TOOLGATE_TENANTS, comma-separated)")
	lanes := fs.Int("lanes", cmdutil.EnvInt("TOOLGATE_LANES", streams.DefaultLanes), "fairness lanes of the deployment: accumulate's user is granted its lane durables by name; the gate stages' users their own lanes' stream, whatever L (TOOLGATE_LANES)")
	parts := fs.Int("partitions", cmdutil.EnvInt("TOOLGATE_PARTITIONS", streams.DefaultPartitions), "partitions of the gate stages' streams (P): each stage's user is granted its partition streams 1 to P-1 by name; render with the larger P while P is lowered, until the streams beyond it are pruned (TOOLGATE_PARTITIONS)")
	ops, err := cmdutil.ParseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("authz render takes no operands (got %q); it writes to standard output", ops[0])
	}
	g, err := authz.ParseGroups(*groups)
	if err != nil {
		return err
	}
	conf, err := authz.Config{Groups: g, Tenants: authz.ParseTenants(*tenants), Lanes: *lanes, Partitions: *parts, Mapped: *parts}.Render()
	if err != nil {
		return err
	}
	fmt.Print(conf)
	return nil
}
