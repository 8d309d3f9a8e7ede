package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed web/templates/*.html
var templateFS embed.FS

//go:embed web/static
var staticFS embed.FS

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "web")
	return http.FileServerFS(sub)
}

// pages are the parsed templates, one set per page with the layout.
type pages struct{ t map[string]*template.Template }

// funcs are the templates' functions.
func funcs() template.FuncMap {
	return template.FuncMap{
		"clock": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.Local().Format("2006-01-02 15:04:05")
		},
		"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"dur":     fmtDur,
		"short": func(s string) string {
			if len(s) > 16 {
				return s[:16]
			}
			return s
		},
		"pretty":  prettyJSON,
		"join":    strings.Join,
		"can":     func(u user, r string) bool { return u.Role.Can(Role(r)) },
		"stageOf": stageOf,
		"rate":    rate,
		"updated": updated,
	}
}

func newPages() (*pages, error) {
	names, err := fs.Glob(templateFS, "web/templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{t: map[string]*template.Template{}}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "web/templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs()).ParseFS(templateFS, "web/templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", n, err)
		}
		p.t[base] = t
	}
	return p, nil
}

// view is what every page template gets.
type view struct {
	Title string
	Nav   string
	User  user
	Flash *flash
	Data  any
	// Events is the topic of the page's live stream (/console/events);
	// empty: none.
	Events string
}

type flash struct {
	OK  bool
	Msg string
}

// render writes page with data, or a plain error when the template fails
// (never half a page).
func (s *Server) render(w http.ResponseWriter, r *http.Request, page, title string, data any) {
	s.renderStatus(w, r, http.StatusOK, page, title, data, nil)
}

func (s *Server) renderStatus(w http.ResponseWriter, r *http.Request, code int, page, title string, data any, fl *flash) {
	t, ok := s.pages.t[page]
	if !ok {
		http.Error(w, "console: no page "+page, http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	v := view{Title: title, Nav: page, User: userOf(r), Flash: fl, Data: data}
	switch d := data.(type) {
	case *overview:
		v.Events = "overview"
	case replayView:
		if !d.Done {
			v.Events = "replay:" + d.Job.ID
		}
	}
	if rows, ok := data.([]pendingRow); ok && page == "approvals" {
		v.Events = fmt.Sprintf("approvals:%d", len(rows))
	}
	if err := t.ExecuteTemplate(&b, "layout.html", v); err != nil {
		s.cfg.Log.Error().Err(err).Str("page", page).Msg("console: render")
		http.Error(w, "console: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// fail shows an error page; msg must hold no arguments or secrets.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.renderStatus(w, r, code, "error", "Error", msg, &flash{Msg: msg})
}

func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDur(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// prettyJSON indents JSON; anything else is returned as it is.
func prettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	case string:
		raw = []byte(x)
	default:
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
