package authz

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerUsers returns the users of an embedded nats-server, each with its
// permissions and the password from passwords (Names and Client); a user
// without a password is left out.
func ServerUsers(passwords map[string]string) ([]*server.User, error) {
	var users []*server.User
	for _, name := range append(Names(), Client) {
		pw, ok := passwords[name]
		if !ok {
			continue
		}
		p, err := Role(name)
		if err != nil {
			return nil, err
		}
		users = append(users, &server.User{Username: name, Password: pw, Permissions: serverPermissions(p)})
	}
	return users, nil
}

func serverPermissions(p *Permissions) *server.Permissions {
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

// ClientOptions are the connection options of user: its credentials and its
// own inbox prefix, which its subscribe permissions are built around.
func ClientOptions(user, password string) []nats.Option {
	return []nats.Option{nats.UserInfo(user, password), nats.CustomInboxPrefix(InboxPrefix(user))}
}
