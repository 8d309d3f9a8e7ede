package cmdutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
)

// NATSFlag adds --nats to fs, defaulting to TOOLGATE_NATS_URL.
func NATSFlag(fs *flag.FlagSet) *string {
	return fs.String("nats", Env("TOOLGATE_NATS_URL", nats.DefaultURL), "NATS server URL (TOOLGATE_NATS_URL)")
}

// Connect connects an operator command: as the admin (connectAs).
func Connect(url string) (*nats.Conn, jetstream.JetStream, error) {
	return ConnectAs(url, authz.Admin)
}

// ConnectAs connects as user, with the first credentials it finds: those in
// url, else TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD (which then name
// the user), else the password `toolgate up` generated for user in the
// secrets directory (TOOLGATE_SECRETS, default .toolgate/secrets,
// nats-<user>.password), else none (`toolgate up --insecure`). Replies come
// under the user's own inbox prefix (authz.InboxPrefix), the only one its
// permissions let it read. `toolgate publish` connects as
// authz.ProducerUser(tenant).
func ConnectAs(serverURL, user string) (*nats.Conn, jetstream.JetStream, error) {
	c := CredentialsFor(serverURL, user, os.Getenv)
	opts := []nats.Option{nats.Name("toolgate cli"), nats.Timeout(5 * time.Second)}
	if c.User != "" {
		opts = append(opts, nats.CustomInboxPrefix(authz.InboxPrefix(c.User)))
		if c.Password != nil {
			opts = append(opts, nats.UserInfo(c.User, *c.Password))
		}
	}
	// The server refuses a request it does not permit without answering
	// it: the request would wait out its deadline (30 s) and end in a bare
	// timeout. A permissions violation ends the command at once instead:
	// the connection is closed (every pending request fails), and what to
	// do is said.
	var once sync.Once
	opts = append(opts, nats.ErrorHandler(func(nc *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			once.Do(func() {
				fmt.Fprintf(os.Stderr, "toolgate: %v\ntoolgate: %s\n", err, c.denied(user))
				go nc.Close()
			})
		}
	}))
	nc, err := nats.Connect(serverURL, opts...)
	if err != nil {
		return nil, nil, c.Explain(serverURL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// credentials are what connectAs found, and where.
type credentials struct {
	User     string
	Password *string // nil: in the URL, or none
	from     string  // where they came from, for error messages
	Looked   string  // the password file looked for, when none was found
}

func CredentialsFor(serverURL, user string, getenv func(string) string) credentials {
	if u, err := url.Parse(serverURL); err == nil && u.User != nil && u.User.Username() != "" {
		return credentials{User: u.User.Username(), from: "the URL"}
	}
	if eu := getenv("TOOLGATE_NATS_USER"); eu != "" {
		pw := getenv("TOOLGATE_NATS_PASSWORD")
		return credentials{User: eu, Password: &pw, from: "TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD"}
	}
	dir := secrets.Dir(getenv)
	name := authz.PasswordFile(user)
	if pw, err := secrets.Read(dir, name); err == nil {
		return credentials{User: user, Password: &pw, from: filepath.Join(dir, name)}
	}
	return credentials{Looked: filepath.Join(dir, name)}
}

// denied says why a request was refused and what to do, for a command
// that connects as want (the admin for operator commands).
func (c credentials) denied(want string) string {
	pwFile := authz.PasswordFile(want)
	if c.User == "" {
		return fmt.Sprintf("connected without credentials, as toolgate up lets a local client in: it may only publish responses. This command needs user %s, whose password toolgate up writes to %s (not found): run it where toolgate up runs, set TOOLGATE_SECRETS to toolgate up's --secrets directory, or set TOOLGATE_NATS_USER=%s and TOOLGATE_NATS_PASSWORD", want, c.Looked, want)
	}
	return fmt.Sprintf("connected as user %s (credentials from %s), which may not do this; this command needs user %s: set TOOLGATE_NATS_USER=%s and TOOLGATE_NATS_PASSWORD, or unset them and set TOOLGATE_SECRETS to the directory holding %s", c.User, c.from, want, want, pwFile)
}

// Explain turns a failed connection into what to do about it.
func (c credentials) Explain(serverURL string, err error) error {
	auth := errors.Is(err, nats.ErrAuthorization) || strings.Contains(strings.ToLower(err.Error()), "authorization")
	switch {
	case auth && c.User == "":
		return fmt.Errorf("connect to NATS at %s without credentials: %w (toolgate up requires them: found no %s; run from the directory toolgate up runs in, set TOOLGATE_SECRETS to its secrets directory, or set TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD)", serverURL, err, c.Looked)
	case auth:
		return fmt.Errorf("connect to NATS at %s as %s (password from %s): %w (is it the secrets directory of the toolgate up that runs there? set TOOLGATE_SECRETS, or TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD)", serverURL, c.User, c.from, err)
	}
	return fmt.Errorf("connect to NATS at %s: %w (is `toolgate up` running? set TOOLGATE_NATS_URL)", serverURL, err)
}

func Timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// OpenBucket connects to url and opens one key-value bucket, for a command
// that reads or writes it. done closes the connection and the deadline.
func OpenBucket(url, bucket string) (ctx context.Context, kv jetstream.KeyValue, done func(), err error) {
	nc, js, err := Connect(url)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := Timeout()
	done = func() { cancel(); nc.Close() }
	if kv, err = js.KeyValue(ctx, bucket); err != nil {
		done()
		return nil, nil, nil, ExplainNATS(err, "bucket "+bucket) // natserr.go: what to do about it
	}
	return ctx, kv, done, nil
}
