package stage

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/execute"
)

func TestExecFlags_read_the_key_the_allowlist_and_the_answer_limit(t *testing.T) {
	dir := t.TempDir()
	s, err := execute.EnsureSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"TOOLGATE_EXEC_SIGNING_KEY": filepath.Join(dir, execute.SigningKeyFile),
		"TOOLGATE_EXEC_ALLOW":       "billing.internal:8443, 10.0.0.0/8",
		"TOOLGATE_EXEC_MAX_RESULT":  "65536",
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	build := ExecFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	c, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if !c.Signer.Public()[0].Equal(s.Public()[0]) || c.Allow.String() != "10.0.0.0/8,billing.internal:8443" || c.MaxResult != 65536 {
		t.Fatalf("config %+v (allow %s)", c, c.Allow)
	}
	for _, bad := range [][]string{
		{"-exec-signing-key", filepath.Join(dir, "missing.key")},
		{"-exec-signing-key", filepath.Join(dir, execute.PublicKeyFile)},
		{"-exec-allow", "10.0.0.0/99"},
		{"-exec-max-result", "lots"},
		{"-exec-max-result", "0"},
		{"-exec-signature-ttl", "soon"},
		{"-exec-signature-ttl", "10ms"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		build := ExecFlags(fs, func(string) string { return "" })
		if err := fs.Parse(bad); err != nil {
			t.Fatal(err)
		}
		if _, err := build(); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "-")[:4]) {
			t.Errorf("%v: %v, want an error", bad, err)
		}
	}
}

func TestExecConfig_up_keeps_the_pair_in_its_secrets_dir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	var c ExecConfig
	if err := c.EnsureKey(dir); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, execute.PublicKeyFile))
	if err != nil || string(pub) != c.Signer.PublicText() {
		t.Fatalf("%s: %q %v, want the signer's public key", execute.PublicKeyFile, pub, err)
	}
	again := ExecConfig{}
	if err := again.EnsureKey(dir); err != nil || !again.Signer.Public()[0].Equal(c.Signer.Public()[0]) {
		t.Fatalf("a restart made another key (%v)", err)
	}
	given, _ := execute.GenerateSigner()
	kept := ExecConfig{Signer: given}
	if err := kept.EnsureKey(dir); err != nil || kept.Signer != given {
		t.Fatal("a configured key was replaced")
	}
}

func TestExecFlags_signature_v1_is_off_unless_turned_on(t *testing.T) {
	for _, c := range []struct {
		env, flag string
		on, bad   bool
	}{
		{},
		{env: "true", on: true},
		{env: "true", flag: "false"},
		{flag: "1", on: true},
		{flag: "sometimes", bad: true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		build := ExecFlags(fs, func(k string) string {
			if k == "TOOLGATE_EXEC_SIGNATURE_V1" {
				return c.env
			}
			return ""
		})
		var args []string
		if c.flag != "" {
			args = []string{"-exec-signature-v1", c.flag}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		got, err := build()
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), "exec-signature-v1") {
				t.Errorf("%+v: %v, want an error naming the flag", c, err)
			}
			continue
		}
		if err != nil || got.SignatureV1 != c.on {
			t.Errorf("%+v: v1 on %v (%v), want %v", c, got.SignatureV1, err, c.on)
		}
	}
}
