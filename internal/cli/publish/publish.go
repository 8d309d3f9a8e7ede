package publish

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// Exit codes of publish (README "toolgate publish"): what became of the
// response, so a script can branch on it.
const (
	exitPublishFailed   = 3 // a call failed, was denied or rejected, or the response was refused
	exitPublishWaiting  = 4 // --wait ended with outcomes missing: approval, an open stream, silence
	exitPublishConflict = 5 // a duplicate (already published) or a response id / stream conflict
)

// maxPublishInput bounds what publish reads from a file or stdin.
const maxPublishInput = 256 << 20

// publishFlags are publish's command line.
type publishFlags struct {
	fs                                 *flag.FlagSet
	url, prov, rid, principal, roles   *string
	tenant, token, model, conversation *string
	end, priority                      *string
	wait                               *time.Duration
	tolerant, dryRun, atomic           *bool
	maxTokens                          *int
}

func newPublishFlags() publishFlags {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	return publishFlags{
		fs:           fs,
		url:          cmdutil.NATSFlag(fs),
		prov:         fs.String("provider", "", "Toolgate-Provider: "+strings.Join(provider.Names(), ", ")+" (default: detected from the body)"),
		rid:          fs.String("response-id", "", "Toolgate-Response-Id (default: derived from the file name and the time)"),
		wait:         fs.Duration("wait", 0, "wait this long for every outcome and print each; the exit code says what happened"),
		tolerant:     fs.Bool("tolerant", false, "recover tool calls written as text (Toolgate-Tolerant: true)"),
		principal:    fs.String("principal", "", "Toolgate-Principal (ignored where toolgate verifies identity: the token's is used)"),
		roles:        fs.String("roles", "", "Toolgate-Roles, comma separated (ignored where toolgate verifies identity)"),
		tenant:       fs.String("tenant", os.Getenv("TOOLGATE_TENANT"), "Toolgate-Tenant, the NATS user producer-TENANT publish connects as, and the tenant whose results --wait reads (TOOLGATE_TENANT); where toolgate verifies identity, give the token's tenant"),
		token:        fs.String("token", os.Getenv("TOOLGATE_TOKEN"), "identity token, a JWT of the deployment's issuer, sent as Toolgate-Token (TOOLGATE_TOKEN)"),
		model:        fs.String("model", "", "Toolgate-Model: the model that wrote the response"),
		conversation: fs.String("conversation", "", "Toolgate-Conversation: the conversation the response belongs to"),
		atomic:       fs.Bool("atomic", false, "Toolgate-Atomic: true: the response's calls run all or none"),
		dryRun:       fs.Bool("dry-run", false, "Toolgate-Dry-Run: true: every gate runs, nothing executes"),
		maxTokens:    fs.Int("max-tokens", 0, "Toolgate-Max-Tokens: the request's output token cap"),
		priority:     fs.String("priority", "", "Toolgate-Priority: interactive or batch (a tenant's batch response goes on its own subject toolgate.in.t.TENANT.batch, which accumulate takes after the tenant's interactive ones); none: the tenant's default"),
		end:          fs.String("end", "", "after a transcript's events, send Toolgate-End: REASON (the stream ends unfinished now, not at toolgate's idle timeout)"),
	}
}

// Publish sends a whole response, or a recorded stream event by event, as a
// producer does: as the NATS user producer[-TENANT]. With --wait it prints
// every outcome and exits with what happened (exitPublish*).
func Publish(args []string) error {
	pf := newPublishFlags()
	ops, err := cmdutil.ParseFlags(pf.fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 1 {
		return cmdutil.UsageError("publish: want one FILE (or - for stdin), got %d: %s", len(ops), strings.Join(ops, " "))
	}
	file := "-"
	if len(ops) == 1 {
		file = ops[0]
	}
	data, err := readPublishInput(file)
	if err != nil {
		return err
	}
	prov, err := chooseProvider(*pf.prov, data)
	if err != nil {
		return err
	}
	rid := *pf.rid
	if rid == "" {
		rid = defaultResponseID(file)
	}
	if !call.ValidResponseID(rid) {
		return cmdutil.UsageError("publish: --response-id %q: use 1 to 128 letters, digits, '-' and '_' (it is a subject token)", rid)
	}
	switch *pf.priority {
	case "", wire.PriorityInteractive, wire.PriorityBatch:
	default:
		return cmdutil.UsageError("publish: --priority %q: want %s or %s", *pf.priority, wire.PriorityInteractive, wire.PriorityBatch)
	}
	if *pf.end != "" && !provider.IsTranscript(data) {
		return cmdutil.UsageError("publish: --end marks the end of a stream; %s is one whole response body", file)
	}
	meta := producer.Meta{Provider: prov, ResponseID: rid, Tenant: *pf.tenant, Principal: *pf.principal, Roles: *pf.roles, Token: *pf.token,
		Model: *pf.model, Conversation: *pf.conversation, Tolerant: *pf.tolerant, DryRun: *pf.dryRun, Atomic: *pf.atomic, MaxTokens: *pf.maxTokens, Priority: *pf.priority}
	plan, err := planOf(meta, data, *pf.end)
	if err != nil {
		return err
	}
	return publishPlan(*pf.url, plan, *pf.wait)
}

// readPublishInput reads FILE, or stdin for "-", up to maxPublishInput.
func readPublishInput(file string) ([]byte, error) {
	r := io.Reader(os.Stdin)
	if file == "-" {
		if cmdutil.IsTerminal(os.Stdin) {
			return nil, cmdutil.UsageError("publish: want a FILE, or the body on stdin (publish - < body.json); stdin is a terminal")
		}
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPublishInput+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("publish: read %s: %w", file, err)
	case len(data) > maxPublishInput:
		return nil, fmt.Errorf("publish: %s is over %d MiB", file, maxPublishInput>>20)
	case len(data) == 0:
		return nil, fmt.Errorf("publish: %s is empty", file)
	}
	return data, nil
}

// chooseProvider returns the provider to send: the one given, checked against the
// body's shape (a mismatch is said on stderr: toolgate would refuse the body
// as undecodable), or the one detected.
func chooseProvider(given string, data []byte) (string, error) {
	detected, derr := provider.Detect(data)
	if given == "" {
		if derr != nil {
			return "", cmdutil.UsageError("publish: %v", derr)
		}
		return detected, nil
	}
	if !provider.Known(given) {
		return "", cmdutil.UsageError("publish: --provider %q: use one of %s", given, strings.Join(provider.Names(), ", "))
	}
	if derr == nil && detected != given {
		fmt.Fprintf(os.Stderr, "toolgate: publish: the body looks like %s, not %s: toolgate will likely refuse it (undecodable); drop --provider to use the detected one, or pass --provider %s\n", detected, given, detected)
	}
	return given, nil
}

// defaultResponseID is FILE's base name (or "stdin") and the time.
func defaultResponseID(file string) string {
	base := "stdin"
	if file != "-" {
		base = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return call.SafeResponseID(fmt.Sprintf("%s-%d", strings.NewReplacer(".", "-", " ", "-").Replace(base), time.Now().UnixMilli()))
}

// publishPlan connects as the producer of meta's tenant, watches the plan's
// responses, publishes them and, with wait, awaits their outcomes.
func publishPlan(url string, plan []planned, wait time.Duration) error {
	tenant := plan[0].meta.Tenant
	nc, js, err := cmdutil.ConnectAs(url, authz.ProducerUser(tenant))
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := canReadReplies(nc); err != nil {
		return publishError(url, tenant, err)
	}
	p := producer.New(js).ForTenant(tenant)
	if c := cmdutil.CredentialsFor(url, authz.ProducerUser(tenant), os.Getenv); c.User != "" && plan[0].meta.Roles != "" {
		// Roles count only from a user the deployment lets assert them
		// (--identity-assert-users), on its own subject.
		p = p.AssertingAs(c.User)
	}
	// Watch before publishing: a fast pipeline's outcomes come before the
	// last publish returns.
	var w *producer.Watch
	if wait > 0 {
		if w, err = p.Watch(); err != nil {
			return err
		}
		defer w.Stop()
		for _, r := range plan {
			if err := w.Add(r.meta.ResponseID); err != nil {
				return err
			}
		}
	}
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	for i := range plan {
		err := plan[i].send(ctx, p)
		if errors.Is(err, producer.ErrConflict) { // refused at publish on its claimed subject: nothing ran
			return &cmdutil.ExitError{Code: exitPublishConflict, Err: err}
		}
		if err != nil {
			return publishError(url, tenant, err)
		}
	}
	if wait == 0 {
		if dups := duplicateIDs(plan); len(dups) > 0 {
			return &cmdutil.ExitError{Code: exitPublishConflict, Err: errors.New(alreadyPublished(dups))}
		}
		return nil
	}
	return awaitPlan(url, w, plan, wait)
}

// canReadReplies fails fast where the connection may not read its inbox,
// and so no JetStream acknowledgement (an unauthenticated connection to
// toolgate up): the server refuses the subscription before it answers the
// flush. Without this the first publish waits out its whole timeout.
func canReadReplies(nc *nats.Conn) error {
	sub, err := nc.SubscribeSync(nc.NewInbox())
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) {
		return fmt.Errorf("publish: this connection may not read replies, so JetStream's acknowledgements cannot reach it: %w", err)
	}
	return nil
}

// publishError says what to do about a publish JetStream did not
// acknowledge: most often a connection without the producer's credentials.
func publishError(url, tenant string, err error) error {
	if c := cmdutil.CredentialsFor(url, authz.ProducerUser(tenant), os.Getenv); c.User == "" && !errors.Is(err, producer.ErrDuplicate) {
		return fmt.Errorf("%w (connected without credentials: found no %s; toolgate up lets such a connection publish but not read JetStream's acknowledgements: set TOOLGATE_SECRETS to its secrets directory, or TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD)", err, c.Looked)
	}
	return err
}
