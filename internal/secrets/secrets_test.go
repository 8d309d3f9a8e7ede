package secrets

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsure_generates_once_and_reads_back(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	a, err := Ensure(dir, "k", Random(16))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Ensure(dir, "k", Random(16))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || len(a) != 35 {
		t.Fatalf("second Ensure gave %q, first %q", b, a)
	}
	st, err := os.Stat(filepath.Join(dir, "k"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	if d, _ := os.Stat(dir); d.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v, want 0700", d.Mode().Perm())
	}
	got, err := Read(dir, "k")
	if err != nil || got+"\n" != string(a) {
		t.Fatalf("Read = %q, %v", got, err)
	}
	if _, err := Read(dir, "missing"); err == nil {
		t.Fatal("Read of a missing file: no error")
	}
}

func TestDir_prefers_TOOLGATE_SECRETS(t *testing.T) {
	if Dir(func(string) string { return "" }) != DefaultDir {
		t.Fatal("default")
	}
	if Dir(func(k string) string { return map[string]string{"TOOLGATE_SECRETS": "/x"}[k] }) != "/x" {
		t.Fatal("env")
	}
}
