package modelclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAPIKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("key", "  sk-from-file\n")
	empty := write("empty", " \n")
	twoLines := write("two", "sk-a\nsk-b\n")
	for _, tc := range []struct {
		name, env, file string
		want, wantErr   string
	}{
		{name: "from env, trimmed", env: " sk-env \n", want: "sk-env"},
		{name: "from file, trimmed", file: good, want: "sk-from-file"},
		{name: "neither is no key", want: ""},
		{name: "both is ambiguous", env: "sk-env", file: good, wantErr: "set only one"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: "read API key file"},
		{name: "empty file", file: empty, wantErr: "is empty"},
		{name: "two lines", file: twoLines, wantErr: "more than one line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadAPIKey(tc.env, tc.file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "sk-") {
					t.Errorf("error reveals a key: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
