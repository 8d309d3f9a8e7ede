package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/wire"
)

func TestCut_names_size_and_sha256_and_the_text_does_not_repeat_it(t *testing.T) {
	data := []byte(`"` + strings.Repeat("r", 100<<10) + `"`)
	cut := Cut(data, 1<<10, 512)
	c, ok := IsCut(cut)
	if !ok || c.Bytes != int64(len(data)) || len(c.SHA256) != 64 || c.Limit != 1<<10 || len(c.Excerpt) != 512 {
		t.Fatalf("cut form %s", cut)
	}
	if string(Cut([]byte(`{"a":1}`), 1<<10, 512)) != `{"a":1}` {
		t.Fatal("a part under the limit changed")
	}
	for _, prov := range provider.Names() {
		o := Outcome{Provider: prov, CallID: "r-0", Tool: "get_weather", Status: string(wire.Executed), OK: true, Result: cut}
		msg, err := Message(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(msg), c.Excerpt[:64]) {
			t.Fatalf("%s: message repeats the excerpt: %s", prov, msg)
		}
		if !strings.Contains(string(msg), c.SHA256) || !json.Valid(msg) {
			t.Fatalf("%s: message %s: want it to name the cut", prov, msg)
		}
	}
}

func TestText_output_too_large_says_what_to_do(t *testing.T) {
	got := Text(Outcome{Tool: "t", Status: string(wire.OutputTooLarge), Errors: []string{"envelope 20 MB"}})
	if !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, "too large to store") || !strings.Contains(got, "Send smaller arguments") {
		t.Fatalf("text %q", got)
	}
}
