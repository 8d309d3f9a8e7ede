package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// post is a POST from the page (fetch, form-encoded, same origin): the
// response's status and body.
type post struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

func fetchPost(t *testing.T, tab context.Context, path string, form map[string]string) post {
	t.Helper()
	f, err := json.Marshal(form)
	if err != nil {
		t.Fatal(err)
	}
	raw := js[[]byte](t, tab, fmt.Sprintf(`fetch(%q, {method: "POST", body: new URLSearchParams(%s), redirect: "follow"}).then(async r => ({status: r.status, body: await r.text()}))`, path, f))
	var p post
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("fetch result %s: %v", raw, err)
	}
	return p
}
