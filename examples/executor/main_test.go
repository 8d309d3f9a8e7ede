package main

import (
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
)

// TestCredentials_are_the_example_groups: the names written out in main.go
// are internal/authz's and internal/secrets'.
func TestCredentials_are_the_example_groups(t *testing.T) {
	if group != authz.ExampleGroup || user != authz.Executor || secretsDir != secrets.DefaultDir {
		t.Fatalf("group %s user %s dir %s; want %s %s %s", group, user, secretsDir, authz.ExampleGroup, authz.Executor, secrets.DefaultDir)
	}
	dir := t.TempDir()
	if _, err := secrets.Ensure(dir, authz.PasswordFile(user), secrets.Random(16)); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOOLGATE_SECRETS": dir}
	opts, from := credentials(func(k string) string { return env[k] })
	if len(opts) != 2 || from == "" {
		t.Fatalf("credentials in %s: %d options (%s)", dir, len(opts), from)
	}
	if _, from := credentials(func(string) string { return "" }); from == "" {
		t.Fatal("no description without credentials")
	}
	if authz.InboxPrefix(user) != "_INBOX_"+user {
		t.Fatal("inbox prefix")
	}
}
