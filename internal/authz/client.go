package authz

import "github.com/nats-io/nats.go"

// ClientOptions are the connection options of user: its credentials and its
// own inbox prefix, which its subscribe permissions are built around.
func ClientOptions(user, password string) []nats.Option {
	return []nats.Option{nats.UserInfo(user, password), nats.CustomInboxPrefix(InboxPrefix(user))}
}

// PasswordFile is the name of user's password in the secrets directory
// (internal/secrets) where `toolgate up` generates it and the CLI, the
// example executor and `make run` read it back.
func PasswordFile(user string) string { return "nats-" + user + ".password" }
