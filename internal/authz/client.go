package authz

import "github.com/nats-io/nats.go"

// ClientOptions are the connection options of user: its credentials and its
// own inbox prefix, which its subscribe permissions are built around.
func ClientOptions(user, password string) []nats.Option {
	return []nats.Option{nats.UserInfo(user, password), nats.CustomInboxPrefix(InboxPrefix(user))}
}
