package wire

// Public subjects: a producer publishes on SubjectInResponse or InStream,
// reads Results; an executor answers on Exec.
const (
	SubjectInResponse = "toolgate.in.response"
	// InStreamPrefix starts every stream event subject; the response id follows.
	InStreamPrefix = "toolgate.in.stream."
	// ResultsPrefix starts every result subject; the response id follows.
	ResultsPrefix = "toolgate.results."
	// ExecPrefix starts every executor subject; the tool name follows.
	ExecPrefix = "toolgate.exec."
)

// InStream is the subject of one provider stream's events.
func InStream(responseID string) string { return InStreamPrefix + responseID }

// Results is where every terminal outcome of a response's calls goes.
func Results(responseID string) string { return ResultsPrefix + responseID }

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
)
