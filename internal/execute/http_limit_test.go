package execute

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/result"
)

func TestHTTP_answer_over_the_limit_is_kept_cut_with_its_size_and_sha256(t *testing.T) {
	body := []byte(`{"rows":"` + strings.Repeat("x", 6<<20) + `"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	defer srv.Close()
	limit := result.Limit(16 << 20)
	got, err := (&HTTP{Allow: loopback(t), URL: srv.URL, MaxResult: limit}).Execute(context.Background(), req())
	if err != nil || !got.OK {
		t.Fatalf("reply %+v, %v: want an ok call (the tool ran)", got, err)
	}
	c, cut := result.IsCut(got.Result)
	if !cut {
		t.Fatalf("result of %d bytes kept whole over a %d-byte limit", len(got.Result), limit)
	}
	sum := sha256.Sum256(body)
	if c.Bytes != int64(len(body)) || c.SHA256 != hex.EncodeToString(sum[:]) || c.Limit != limit {
		t.Fatalf("cut form says %d bytes, sha256 %s, limit %d; want %d, %x, %d", c.Bytes, c.SHA256, c.Limit, len(body), sum, limit)
	}
	if !strings.Contains(c.Note, "limit") || !bytes.HasPrefix(body, []byte(c.Excerpt)) || len(c.Excerpt) > result.ExcerptMax {
		t.Fatalf("note %q / excerpt of %d bytes: want the limit named and the answer's beginning", c.Note, len(c.Excerpt))
	}
	if len(got.Result) > limit {
		t.Fatalf("cut result is %d bytes, over the limit %d", len(got.Result), limit)
	}
}

func TestHTTP_answer_at_the_limit_is_kept_whole(t *testing.T) {
	body := `"` + strings.Repeat("y", 1022) + `"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }))
	defer srv.Close()
	got, err := (&HTTP{Allow: loopback(t), URL: srv.URL, MaxResult: len(body)}).Execute(context.Background(), req())
	if err != nil || string(got.Result) != body {
		t.Fatalf("reply %q, %v: want the answer whole", got.Result, err)
	}
}
