package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Public subjects: a producer publishes on SubjectInResponse or InStream,
// reads Results; an executor answers on Exec.
const (
	SubjectInResponse = "toolgate.in.response"
	// InStreamPrefix starts every stream event subject; the response id follows.
	InStreamPrefix = "toolgate.in.stream."
	// ResultsPrefix starts every result subject; the tenant token
	// (TenantToken) and the response id follow.
	ResultsPrefix = "toolgate.results."
	// ProgressPrefix starts every stream progress subject; the tenant
	// token and the response id follow.
	ProgressPrefix = "toolgate.progress."
	// ExecPrefix starts every executor subject; the tool name follows.
	ExecPrefix = "toolgate.exec."
)

// InAsPrefix starts the whole-response subject of one producer user,
// InAsResponse.
const InAsPrefix = "toolgate.in.as."

// InAsResponse is where NATS user user publishes whole responses when its
// Toolgate-Tenant, -Principal and -Roles are to count without a token:
// toolgate.in.as.<user>.response. Only that user may publish there
// (toolgate's NATS permissions), so accumulate knows who sent it, and
// grants the identity headers only to the users the deployment lists
// (--identity-assert-users); from anyone else they are recorded, not
// granted.
func InAsResponse(user string) string { return InAsPrefix + user + ".response" }

// InStream is the subject of one provider stream's events.
func InStream(responseID string) string { return InStreamPrefix + responseID }

// InTenantPrefix starts the ingest subjects of one tenant:
// toolgate.in.t.<tenant>.response, toolgate.in.t.<tenant>.batch and
// toolgate.in.t.<tenant>.stream.<response-id>,
// the tenant as one subject token (TenantToken) at a fixed place, the
// fourth. Only that tenant's producer user may publish there (toolgate's
// NATS permissions), so accumulate takes the tenant from the subject where
// no issuer verifies it: a producer cannot name another tenant.
const InTenantPrefix = "toolgate.in.t."

// InTenantResponse is where tenant's producer publishes whole responses.
func InTenantResponse(tenant string) string {
	return InTenantPrefix + TenantToken(tenant) + ".response"
}

// InTenantBatch is where tenant's producer publishes whole responses of
// priority batch (issue 37): on a subject of their own, accumulate's lanes
// can read a tenant's interactive responses apart from its batch backlog
// (a filter reads no header). A response there is batch whatever its
// Toolgate-Priority says; a provider stream has no batch subject (its
// events go on InTenantStream).
func InTenantBatch(tenant string) string {
	return InTenantPrefix + TenantToken(tenant) + "." + InTenantBatchRest
}

// InTenantBatchRest is what follows the tenant token on InTenantBatch
// (the rest SplitInTenant returns).
const InTenantBatchRest = "batch"

// InTenantStream is the subject of one of tenant's provider streams: its
// events are tenant's alone, whatever another tenant sends under the same
// response id.
func InTenantStream(tenant, responseID string) string {
	return InTenantPrefix + TenantToken(tenant) + ".stream." + responseID
}

// StreamResponses is the stream of the claimed subjects (InTenantClaimed):
// one message per subject, kept for the claim period, read back by direct
// get.
const StreamResponses = "TOOLGATE_RESPONSES"

// ClaimedLast is the direct-get subject that answers the message stored on
// a claimed subject (nats-server's last-by-subject form of
// $JS.API.DIRECT.GET): how a producer tells its own retry from a conflict,
// and accumulate what holds a response id.
func ClaimedLast(subject string) string {
	return "$JS.API.DIRECT.GET." + StreamResponses + "." + subject
}

// What JetStream answers a publish on a claimed subject that already holds
// its message (the per-subject limit, DiscardNewPerSubject): the error
// code and its description, which tell it from other refusals with the
// same code.
const (
	ClaimedFullCode        = 10077
	ClaimedFullDescription = "maximum messages per subject exceeded"
)

// InTenantClaimedRest starts what follows the tenant token on
// InTenantClaimed; the response id follows.
const InTenantClaimedRest = "response."

// InTenantClaimed is where tenant's producer publishes a whole interactive
// response whose id is one subject token (a valid response id):
// toolgate.in.t.<tenant>.response.<response-id>. Its stream keeps one
// message per subject and refuses another for the claim period, so the
// publish itself claims the id: other content under it is refused at
// publish.
func InTenantClaimed(tenant, responseID string) string {
	return InTenantPrefix + TenantToken(tenant) + "." + InTenantClaimedRest + responseID
}

// InTenantAll matches every ingest subject of tenant.
func InTenantAll(tenant string) string { return InTenantPrefix + TenantToken(tenant) + ".>" }

// InResponseFor is where a producer publishes a whole response of tenant:
// InTenantResponse, or SubjectInResponse for no tenant. A tenant's batch
// responses may go on InTenantBatch instead (InResponseForPriority): what
// reads a tenant's whole responses back reads both.
func InResponseFor(tenant string) string {
	if tenant == "" {
		return SubjectInResponse
	}
	return InTenantResponse(tenant)
}

// InResponseForPriority is where a producer publishes a whole response of
// tenant with priority: InTenantBatch for a tenant's batch response,
// otherwise InResponseFor. The shared subject has no batch subject (no
// tenant, no lane).
func InResponseForPriority(tenant, priority string) string {
	if tenant != "" && priority == PriorityBatch {
		return InTenantBatch(tenant)
	}
	return InResponseFor(tenant)
}

// InStreamFor is the subject of a stream of tenant: InTenantStream, or
// InStream for no tenant.
func InStreamFor(tenant, responseID string) string {
	if tenant == "" {
		return InStream(responseID)
	}
	return InTenantStream(tenant, responseID)
}

// SplitInTenant splits a tenant's ingest subject into its tenant token and
// the rest ("response", "batch" (InTenantBatchRest), or
// "stream.<response-id>"; anything else after the token is returned as it
// is, for accumulate to refuse); ok is false for any other subject.
func SplitInTenant(subject string) (token, rest string, ok bool) {
	after, ok := strings.CutPrefix(subject, InTenantPrefix)
	if !ok {
		return "", "", false
	}
	token, rest, ok = strings.Cut(after, ".")
	return token, rest, ok && token != ""
}

// Results is where every terminal outcome of a response's calls goes:
// toolgate.results.<tenant>.<response-id>, so a producer's NATS user can be
// allowed its own tenant's results and nobody else's.
func Results(tenant, responseID string) string {
	return ResultsPrefix + TenantToken(tenant) + "." + responseID
}

// ResultsPartition is where a result of a call of partition k goes
// (streams.Partition, with --partitions P > 1): Results(tenant,
// responseID) for k = 0, and a fifth token "p<k>" after it for k >= 1,
// toolgate.results.<tenant>.<response-id>.p<k>. A producer subscribes to
// TenantResults, or to both forms of a response (ResultsForms).
func ResultsPartition(tenant, responseID string, k int) string {
	if k <= 0 {
		return Results(tenant, responseID)
	}
	return Results(tenant, responseID) + ".p" + strconv.Itoa(k)
}

// ResultsForms are the subjects a response's results may come on, of any
// partition: Results(tenant, responseID) and the same with a fifth token.
func ResultsForms(tenant, responseID string) []string {
	r := Results(tenant, responseID)
	return []string{r, r + ".*"}
}

// ResultsResponse is the response's results subject of a result subject of
// any partition: subject without its partition token, if it has one.
func ResultsResponse(subject string) string {
	rest, ok := strings.CutPrefix(subject, ResultsPrefix)
	if !ok || strings.Count(rest, ".") != 2 {
		return subject
	}
	return subject[:strings.LastIndexByte(subject, '.')]
}

// ResultsResponseID is the response id of a result subject of any
// partition: its fourth token.
func ResultsResponseID(subject string) string {
	r := ResultsResponse(subject)
	return r[strings.LastIndexByte(r, '.')+1:]
}

// TenantResults matches every result of one tenant.
func TenantResults(tenant string) string { return ResultsPrefix + TenantToken(tenant) + ".>" }

// Progress carries a streamed response's progress events (display only).
func Progress(tenant, responseID string) string {
	return ProgressPrefix + TenantToken(tenant) + "." + responseID
}

// TenantProgress matches every progress event of one tenant.
func TenantProgress(tenant string) string { return ProgressPrefix + TenantToken(tenant) + ".>" }

// NoTenant is the tenant token of a call that names no tenant.
const NoTenant = "_"

// TenantToken is the one subject token that stands for tenant: the tenant
// itself when it is 1-64 letters, digits, '-' or '_' (but not "_"),
// NoTenant for none, and otherwise "~" followed by 32 hex digits of its
// sha256 — so no tenant name can reach into another's subjects.
func TenantToken(tenant string) string {
	if tenant == "" {
		return NoTenant
	}
	if tenant != NoTenant && len(tenant) <= 64 && plainToken(tenant) {
		return tenant
	}
	sum := sha256.Sum256([]byte(tenant))
	return "~" + hex.EncodeToString(sum[:16])
}

func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Exec is the default NATS request/reply subject of a tool's executor.
func Exec(tool string) string { return ExecPrefix + tool }

// Headers on ingest, result and internal messages.
const (
	HeaderProvider     = "Toolgate-Provider"
	HeaderResponseID   = "Toolgate-Response-Id"
	HeaderTenant       = "Toolgate-Tenant"
	HeaderPrincipal    = "Toolgate-Principal"
	HeaderRoles        = "Toolgate-Roles"
	HeaderConversation = "Toolgate-Conversation"
	HeaderModel        = "Toolgate-Model"
	HeaderTolerant     = "Toolgate-Tolerant"
	HeaderDryRun       = "Toolgate-Dry-Run"
	HeaderAtomic       = "Toolgate-Atomic"
	HeaderMaxTokens    = "Toolgate-Max-Tokens" // the request's output token cap, to spot silent truncation
	HeaderSeq          = "Toolgate-Seq"
	HeaderEnd          = "Toolgate-End"
	HeaderCallID       = "Toolgate-Call-Id"
	HeaderIdemKey      = "Toolgate-Idempotency-Key"
	HeaderStage        = "Toolgate-Stage"
	HeaderFailure      = "Toolgate-Failure"
	HeaderError        = "Toolgate-Error"
	HeaderStatus       = "Toolgate-Status"
	HeaderTool         = "Toolgate-Tool"
	HeaderOrigSubject  = "Toolgate-Original-Subject"
	HeaderReplay       = "Toolgate-Replay"
	// HeaderPriority is a response's priority: PriorityInteractive or
	// PriorityBatch; none or any other value: its tenant's default.
	HeaderPriority = "Toolgate-Priority"
)

// Priorities of Toolgate-Priority: interactive calls go first within their
// tenant's share; batch calls keep a minimum share.
const (
	PriorityInteractive = "interactive"
	PriorityBatch       = "batch"
)
