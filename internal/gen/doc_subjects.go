package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// subjectFuncs renders each subject (and key) function of
// streams/subjects.go with placeholders for its arguments; the page fails
// to generate when the file has an exported string function missing here.
func subjectFuncs() map[string]string {
	return map[string]string{
		"InStream":          streams.InStream("<response-id>"),
		"InTenantResponse":  tenantPlaceholder(streams.InTenantResponse(tenantToken)),
		"InTenantStream":    tenantPlaceholder(streams.InTenantStream(tenantToken, "<response-id>")),
		"InTenantBatch":     tenantPlaceholder(streams.InTenantBatch(tenantToken)),
		"InTenantBatches":   streams.InTenantBatches(),
		"InTenantStreams":   streams.InTenantStreams(),
		"InTenantResponses": streams.InTenantResponses(),
		"Gate":              streams.Gate("<stage>"),
		"Results":           tenantPlaceholder(streams.Results(tenantToken, "<response-id>")),
		"ResultsOf":         streams.ResultsOf("<response-id>"),
		"ResultsAll":        streams.ResultsAll(),
		"DLQ":               streams.DLQ("<stage>", "<failure>"),
		"Exec":              streams.Exec("<tool>"),
		"ExecReplayKeys":    streams.ExecReplayKeys("<tool>"),
		"Progress":          tenantPlaceholder(streams.Progress(tenantToken, "<response-id>")),
		"ProgressAll":       streams.ProgressAll(),
		"Audit":             streams.Audit("<status>"),
		"CallStatus":        streams.CallStatus("<call-id>"),
		"ResponseDone":      streams.ResponseDone("<response-id>"),
		"BatchKey":          streams.BatchKey("<batch-id>", "<kind>", 0),
		"BatchDecisionKey":  streams.BatchDecisionKey("<batch-id>"),
		"BatchMark":         streams.BatchMark("<batch-id>", "<kind>", 0),
		"TimerSubject":      streams.TimerSubject(),
	}
}

// tenantToken stands for a tenant in a subject: a plain token, which
// wire.TenantToken keeps as it is, made <tenant> on the page.
const tenantToken = "TENANT"

func tenantPlaceholder(subject string) string {
	return strings.Replace(subject, "."+tenantToken+".", ".<tenant>.", 1)
}

// subjectDocs are the exported functions of streams/subjects.go that
// return a string, in source order, each with its doc comment.
func subjectDocs(root string) ([][2]string, error) {
	path := filepath.Join(root, "streams", "subjects.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !fd.Name.IsExported() || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
			continue
		}
		if id, ok := fd.Type.Results.List[0].Type.(*ast.Ident); !ok || id.Name != "string" {
			continue
		}
		out = append(out, [2]string{fd.Name.Name, cell(fd.Doc.Text())})
	}
	return out, nil
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// subjectsPage is subjects.md.
func subjectsPage(root string) (string, error) {
	docs, err := subjectDocs(root)
	if err != nil {
		return "", err
	}
	fns := subjectFuncs()
	s := streams.DefaultSettings()
	var b strings.Builder
	b.WriteString("What toolgate declares in NATS, from the `streams` package (`toolgate streams apply` and every stage's start apply it idempotently). Figures are `streams.DefaultSettings()`; `--replicas` and the stage flags change some.\n\n")

	b.WriteString("## Subjects\n\n`<tenant>` is `wire.TenantToken`: the tenant when it is a plain token, `_` for none, else `~` and a hash.\n\n| Function | Subject | Meaning |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| `SubjectInResponse` | %s | a whole provider response, published by a producer |\n", code(streams.SubjectInResponse))
	for _, d := range docs {
		subj, ok := fns[d[0]]
		if !ok {
			return "", fmt.Errorf("streams.%s is not in internal/gen's subjectFuncs: add it", d[0])
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", d[0], code(subj), d[1])
	}

	b.WriteString("\n## Streams\n\n| Stream | Subjects | Retention | Max age | Duplicate window | Max message |\n|---|---|---|---|---|---|\n")
	for _, c := range s.StreamConfigs() {
		var subs []string
		for _, x := range c.Subjects {
			subs = append(subs, code(x))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d bytes |\n", code(c.Name), strings.Join(subs, ", "), retention(c.Retention), dur(c.MaxAge), dur(c.Duplicates), c.MaxMsgSize)
	}

	b.WriteString("\n## Stages\n\nThe stage table (`streams.Table`): each stage's input, and what its least-privilege NATS user may touch besides routing, results, dead letters, audit and status records.\n\n")
	b.WriteString("| Stage | Stream | Takes calls in | Replay enters as | Also publishes | Buckets | Reads |\n|---|---|---|---|---|---|---|\n")
	for _, st := range streams.Table() {
		var in, pub, bk, rd []string
		for _, x := range st.Inputs {
			in = append(in, code(string(x)))
		}
		for _, x := range st.Publishes {
			pub = append(pub, code(x))
		}
		for _, x := range st.Buckets {
			mode := "read"
			if x.Write {
				mode = "read, write"
			}
			bk = append(bk, code(x.Name)+" ("+mode+")")
		}
		for _, x := range st.Reads {
			rd = append(rd, code(x))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", code(st.Name), code(st.Stream), strings.Join(in, ", "), code(string(st.Entry)), strings.Join(pub, ", "), strings.Join(bk, ", "), strings.Join(rd, ", "))
	}

	b.WriteString("\n## Consumers\n\nDurable pull consumers, explicit acknowledgement; a durable's name never changes (a renamed one redelivers everything).\n\n")
	b.WriteString("| Durable | Stream | Filter subject | Max deliver | Ack wait | Max ack pending | Description |\n|---|---|---|---|---|---|---|\n")
	for _, st := range streams.Table() {
		for _, c := range append([]streams.Consumer{st.Consumer}, st.Extra...) {
			cfg := s.Config(c)
			md := fmt.Sprint(cfg.MaxDeliver)
			if cfg.MaxDeliver < 0 {
				md = "unlimited"
			}
			filters := []string{code(cfg.FilterSubject)}
			if cfg.FilterSubject == "" {
				filters = filters[:0]
				for _, f := range cfg.FilterSubjects {
					filters = append(filters, code(f))
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %s |\n", code(cfg.Durable), code(c.Stream), strings.Join(filters, ", "), md, dur(cfg.AckWait), cfg.MaxAckPending, cell(cfg.Description))
		}
	}
	fmt.Fprintf(&b, "\nWith fairness lanes (a tenant list, or `--lanes`), each laned stage also has a durable per lane token, %s in its own stream %s on %s, with its main durable's limits; the main durable reads the lanes of before their stream (%s) too (docs/deploying.md, \"Upgrading: a stream per laned stage\").\n",
		code(streams.LaneDurable("<stage>", "<lane>")), code(streams.LaneStream("<STAGE>")), code(streams.GateLane("<stage>", "<lane>")), code(streams.LegacyGateLane("<stage>", "<lane>")))

	b.WriteString("\n## Key-value buckets\n\n| Bucket | Holds | History | TTL |\n|---|---|---|---|\n")
	for _, c := range s.BucketConfigs() {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", code(c.Bucket), cell(c.Description), c.History, dur(c.TTL))
	}
	return b.String(), nil
}

func retention(r jetstream.RetentionPolicy) string {
	switch r {
	case jetstream.WorkQueuePolicy:
		return "work queue"
	case jetstream.InterestPolicy:
		return "interest"
	}
	return "limits"
}
