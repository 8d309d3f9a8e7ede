package tools

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/tool"
)

// namesRoles matches a policy condition that reads the caller's roles.
var namesRoles = regexp.MustCompile(`\broles\b`)

// roleWarnings warns of the tools of defs whose policy names roles when
// the deployment, as the environment apply runs in describes it, can
// verify none: without an identity issuer (TOOLGATE_IDENTITY_ISSUER) or
// users allowed to assert identity (TOOLGATE_IDENTITY_ASSERT_USERS), no
// caller is granted a role, so such a condition denies every call. The CLI
// cannot read accumulate's flags; it goes by the variables the deployment
// is configured with, and warns when they are unset.
func roleWarnings(defs []tool.Definition, getenv func(string) string) []string {
	if getenv("TOOLGATE_IDENTITY_ISSUER") != "" || getenv("TOOLGATE_IDENTITY_ASSERT_USERS") != "" {
		return nil
	}
	var named []string
	for _, d := range defs {
		if d.Policy != nil && namesRoles.MatchString(d.Policy.Allow) {
			named = append(named, d.Name)
		}
	}
	if len(named) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the policy of %s names roles, which a deployment without an identity issuer grants nobody: "+
		"its condition on roles then denies every call. Roles come only from a verified token (--identity-issuer, TOOLGATE_IDENTITY_ISSUER) "+
		"or from NATS users the deployment allows to assert them (--identity-assert-users, TOOLGATE_IDENTITY_ASSERT_USERS); "+
		"set the one your deployment uses in this environment to silence this", strings.Join(named, ", "))}
}
