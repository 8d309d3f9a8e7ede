package run

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	webconsole "github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/testenv"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

func freeAddr(t *testing.T) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
}

// startUpHTTP is toolgate up (least privilege, the example tools) with its
// --http address and secrets directory returned.
func startUpHTTP(t *testing.T) (natsURL, httpAddr, secretsDir string) {
	t.Helper()
	dir := t.TempDir()
	natsAddr, httpAddr := freeAddr(t), freeAddr(t)
	secretsDir = filepath.Join(dir, "secrets")
	clitest.RunBin(t, httpAddr, []string{"TOOLGATE_SECRETS=", "TOOLGATE_CONSOLE_TOKENS="}, "up", "--listen", natsAddr, "--http", httpAddr, "--ingest-http", freeAddr(t),
		"--data", filepath.Join(dir, "data"), "--secrets", secretsDir, "--tools", "../../../examples/tools.yaml")
	return "nats://" + natsAddr, httpAddr, secretsDir
}

func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	return getWith(t, http.DefaultClient, url)
}

func getWith(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var loginCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// consoleLogin logs in to the console at base (http://host:port) through
// its login form with the first token of secretsDir's token file, as the
// operator toolgate up printed it for; the client keeps the session.
func consoleLogin(t *testing.T, base, secretsDir string) *http.Client {
	t.Helper()
	roles, _, err := webconsole.LoadTokens(filepath.Join(secretsDir, webconsole.TokenFile))
	if err != nil || len(roles) != 1 {
		t.Fatalf("toolgate up's token file: %v, %v: want one token", roles, err)
	}
	var token string
	for tok := range roles {
		token = tok
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	_, page := getWith(t, c, base+webconsole.Prefix+"login")
	m := loginCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no login form:\n%s", page)
	}
	resp, err := c.PostForm(base+webconsole.Prefix+"login", url.Values{"token": {token}, "csrf": {m[1]}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != webconsole.Prefix {
		t.Fatalf("login: %d at %s, want the overview", resp.StatusCode, resp.Request.URL)
	}
	return c
}

// consoleReadsEverything checks a console's pages read every stage and the
// tools as its NATS user: a missing grant shows as an unreadable consumer.
func consoleReadsEverything(t *testing.T, c *http.Client, base string) {
	t.Helper()
	getBody := func(t *testing.T, url string) (int, string) { return getWith(t, c, url) }
	code, body := getBody(t, base+"/")
	if code != 200 || !strings.Contains(body, `data-testid="overview"`) {
		t.Fatalf("GET / (redirected to the console): %d\n%s", code, body)
	}
	for _, want := range []string{`data-stage="accumulate"`, `data-stage="execute"`} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
	if strings.Contains(body, "unreadable") || strings.Contains(body, `class="flash error"`) {
		t.Errorf("the console user could not read all of the overview:\n%s", body)
	}
	code, body = getBody(t, base+"/console/tools")
	if code != 200 || !strings.Contains(body, `data-tool="create_invoice"`) {
		t.Errorf("tools: %d\n%s", code, body)
	}
}

func TestUp_serves_the_console_on_its_http_address(t *testing.T) {
	_, httpAddr, secretsDir := startUpHTTP(t)
	consoleReadsEverything(t, consoleLogin(t, "http://"+httpAddr, secretsDir), "http://"+httpAddr)
	if code, _ := getBody(t, "http://"+httpAddr+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d beside the console", code)
	}
}

func TestConsole_command_connects_as_the_console_user(t *testing.T) {
	ns, natsURL, secretsDir := startUpServer(t) // console_user_test.go
	addr := freeAddr(t)
	log := clitest.RunBin(t, addr, []string{"TOOLGATE_SECRETS=" + secretsDir, "TOOLGATE_NATS_USER=", "TOOLGATE_CONSOLE_TOKENS="}, "console", "--listen", addr, "--nats", natsURL)
	consoleReadsEverything(t, consoleLogin(t, "http://"+addr, secretsDir), "http://"+addr)
	if strings.Contains(log.String(), "Permissions Violation") {
		t.Errorf("permission violations:\n%s", log)
	}
	onlyConsoleConnected(t, ns)
}

func TestConsole_without_a_token_file_refuses_on_any_address(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := consoleConfig("", empty, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "--tokens FILE") || !strings.Contains(err.Error(), "TOOLGATE_SECRETS") {
		t.Fatalf("err = %v, want one saying what to pass", err)
	}
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# who may do what\noperator olga 0123456789abcdef0123\nviewer vic fedcba9876543210fedc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, got, err := consoleConfig(file, empty, zerolog.Nop())
	if err != nil || got != file || len(cfg.Tokens) != 2 || cfg.Names["0123456789abcdef0123"] != "olga" {
		t.Fatalf("cfg %+v from %s, %v", cfg, got, err)
	}
	// No --tokens: the token file toolgate up keeps in its secrets directory.
	made, err := webconsole.EnsureTokenFile(empty)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, got, err := consoleConfig("", empty, zerolog.Nop()); err != nil || got != made || len(cfg.Tokens) != 1 {
		t.Fatalf("from the secrets directory: %+v from %s, %v", cfg, got, err)
	}
	if err := os.WriteFile(file, []byte("admin root 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := consoleConfig(file, empty, zerolog.Nop()); err == nil || strings.Contains(err.Error(), "0123456789abcdef") {
		t.Fatalf("a bad role: err = %v (never with the token)", err)
	}
	if err := os.WriteFile(file, []byte("# nobody yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := consoleConfig(file, empty, zerolog.Nop()); err == nil {
		t.Fatal("a token file without a token accepted")
	}
}

func TestConsole_flags_and_operands(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_CONSOLE_TOKENS", "")
	if err := ConsoleCmd([]string{"extra"}); !errors.Is(err, cmdutil.ErrUsage) {
		t.Fatalf("an operand: %v, want a usage error", err)
	}
	for _, addr := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
		if err := ConsoleCmd([]string{"--listen", addr}); err == nil || !strings.Contains(err.Error(), "no token file") {
			t.Fatalf("--listen %s without tokens: %v", addr, err)
		}
	}
}

func TestUp_insecure_console_times_stages_by_the_handler_histogram(t *testing.T) {
	dir := t.TempDir()
	httpAddr := freeAddr(t)
	clitest.RunBin(t, httpAddr, []string{"TOOLGATE_SECRETS=", "TOOLGATE_CONSOLE_TOKENS="}, "up", "--insecure", "--listen", freeAddr(t), "--http", httpAddr, "--ingest-http", "",
		"--data", filepath.Join(dir, "data"), "--secrets", filepath.Join(dir, "secrets"))
	c := consoleLogin(t, "http://"+httpAddr, filepath.Join(dir, "secrets")) // --insecure opens NATS, never the console
	code, body := getWith(t, c, "http://"+httpAddr+"/console/")
	if code != 200 || !strings.Contains(body, "toolgate_stage_handle_seconds") {
		t.Fatalf("GET /console/: %d, want p50/p99 from the handler histogram:\n%s", code, body)
	}
}

func TestUp_console_with_a_token_file_asks_to_log_in(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("approver alex 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr := freeAddr(t)
	clitest.RunBin(t, httpAddr, []string{"TOOLGATE_SECRETS=", "TOOLGATE_CONSOLE_TOKENS=" + tokens}, "up", "--listen", freeAddr(t), "--http", httpAddr, "--ingest-http", "",
		"--data", filepath.Join(dir, "data"), "--secrets", filepath.Join(dir, "secrets"))
	code, body := getBody(t, "http://"+httpAddr+"/console/approvals")
	if code != 200 || !strings.Contains(body, `<form id="login"`) {
		t.Fatalf("without a session: %d, want the login form:\n%s", code, body)
	}
}
