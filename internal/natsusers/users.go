// Package natsusers turns the least-privilege users of internal/authz into
// the users of an embedded nats-server. It is the one part of authz that
// links nats-server, so it lives apart: toolgate up, chaos and tests import
// it, the stage binaries do not.
package natsusers

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
)

// Users is ConfigUsers of authz.DefaultConfig.
func Users(passwords map[string]string) ([]*server.User, error) {
	return ConfigUsers(authz.DefaultConfig(), passwords)
}

// ConfigUsers returns the users of an embedded nats-server, each with its
// permissions and the password from passwords (c.Names and authz.Client);
// a user without a password is left out.
func ConfigUsers(c authz.Config, passwords map[string]string) ([]*server.User, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var users []*server.User
	for _, name := range append(c.Names(), authz.Client) {
		pw, ok := passwords[name]
		if !ok {
			continue
		}
		p, err := c.Role(name)
		if err != nil {
			return nil, err
		}
		users = append(users, &server.User{Username: name, Password: pw, Permissions: serverPermissions(p)})
	}
	return users, nil
}

func serverPermissions(p *authz.Permissions) *server.Permissions {
	if p == nil {
		return nil
	}
	sp := &server.Permissions{
		Publish:   subjectPermission(p.Publish),
		Subscribe: subjectPermission(p.Subscribe),
	}
	if p.Responses {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: 2 * time.Minute}
	}
	return sp
}

func subjectPermission(allow []string) *server.SubjectPermission {
	if len(allow) == 0 {
		return &server.SubjectPermission{Deny: []string{">"}}
	}
	return &server.SubjectPermission{Allow: append([]string(nil), allow...)}
}
