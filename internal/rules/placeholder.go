package rules

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// PlaceholderConfig configures the placeholder detector for one tool. The zero value is
// the default: on, for every field.
type PlaceholderConfig struct {
	// Disabled turns the detector off for the tool.
	Disabled bool `json:"disabled,omitempty"`
	// IgnoreFields are fields (and everything below them) the detector skips, as dotted
	// paths (customer.note, line_items.*.memo) or JSON pointers (/customer/note); "*"
	// matches any list index or key.
	IgnoreFields []string `json:"ignore_fields,omitempty"`
	// NullableFields are fields where null is a meaningful value, in the same forms.
	NullableFields []string `json:"nullable_fields,omitempty"`
	// ExtraWords are more values that mean "not filled in", matched like the built-in
	// words: whole value, case-insensitive, surrounding spaces and punctuation ignored.
	ExtraWords []string `json:"extra_words,omitempty"`
}

// placeholderWord reports whether w (lower case) is a value a model writes
// when it does not know the real one.
func placeholderWord(w string) bool {
	switch w {
	case "todo", "tbd", "tba", "tbc", "asap", "soon", "fixme", "placeholder",
		"changeme", "change me", "fill in", "fill me in", "insert here",
		"lorem ipsum", "?", "??", "???", "...", "…":
		return true
	}
	return false
}

var (
	// <customer email>, {{name}}, [DATE], ${id}
	templateRe = regexp.MustCompile(`^(<[^<>]*>|\{\{[^{}]*\}\}|\[[A-Z][A-Z0-9 _-]*\]|\$\{[^{}]*\})$`)
	// xxx, XXXX-XXXX, xx/xx/xxxx (with at least three x, checked apart)
	xRe = regexp.MustCompile(`^(?i)x+([ ./:-]+x+)*$`)
	// a leading marker: "TODO: ask the user", "TBD - confirm"
	markerRe = regexp.MustCompile(`^(?i)(todo|tbd|fixme)\b`)
	// reserved example domains (RFC 2606, RFC 6761)
	exampleHostRe = regexp.MustCompile(`(?i)(^|\.)(example\.(com|org|net)|[a-z0-9-]+\.(example|invalid|test))$`)
)

// DetectPlaceholders walks args and returns a violation (Rule -1, action reject) for
// each value that is not filled in: a placeholder word (TODO, TBD, ASAP, soon, ...), a
// template such as <email> or {{name}}, xxx, lorem ipsum, an address or URL at a
// reserved example domain (example.com, *.test, ...), an empty string, and null unless
// the field is in cfg.NullableFields. Fields are dotted paths, list elements by index
// (line_items.0.sku). Violations are ordered by field.
func DetectPlaceholders(args map[string]any, cfg PlaceholderConfig) []Violation {
	if cfg.Disabled {
		return nil
	}
	d := detector{
		ignore:   parsePatterns(cfg.IgnoreFields),
		nullable: parsePatterns(cfg.NullableFields),
		extra:    make([]string, 0, len(cfg.ExtraWords)),
	}
	for _, w := range cfg.ExtraWords {
		d.extra = append(d.extra, normWord(w))
	}
	d.walk(args, nil)
	return d.out
}

type detector struct {
	ignore, nullable [][]string
	extra            []string
	out              []Violation
}

func (d *detector) walk(v any, path []string) {
	if len(path) > 0 && matchAny(d.ignore, path) {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d.walk(v[k], append(slices.Clip(path), k))
		}
	case []any:
		for i, e := range v {
			d.walk(e, append(slices.Clip(path), strconv.Itoa(i)))
		}
	case nil:
		if len(path) > 0 && !matchAny(d.nullable, path) {
			d.add(path, "%s is null: give the real value", field(path))
		}
	case string:
		if why := d.placeholder(v); why != "" {
			d.add(path, "%s %s: give the real value", field(path), why)
		}
	}
}

func (d *detector) add(path []string, format string, a ...any) {
	d.out = append(d.out, Violation{Rule: -1, Field: strings.Join(path, "."), Message: fmt.Sprintf(format, a...), Action: ActionReject})
}

func field(path []string) string {
	if len(path) == 0 {
		return "the arguments"
	}
	return strings.Join(path, ".")
}

// placeholder says why s is not a real value, or "" if it may be one.
func (d *detector) placeholder(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "is empty"
	}
	w := normWord(t)
	if placeholderWord(w) || slices.Contains(d.extra, w) ||
		templateRe.MatchString(t) || (xRe.MatchString(t) && strings.Count(strings.ToLower(t), "x") >= 3) || markerRe.MatchString(t) ||
		strings.Contains(strings.ToLower(t), "lorem ipsum") {
		return fmt.Sprintf("is a placeholder (%q)", s)
	}
	if host := exampleHost(t); host != "" {
		return fmt.Sprintf("is an example address (%q)", s)
	}
	return ""
}

// normWord lowercases w and trims spaces and the punctuation around a bare word ("TODO!",
// "'soon'"), keeping words that are only punctuation, such as "?" and "...", whole.
func normWord(w string) string {
	w = strings.ToLower(strings.TrimSpace(w))
	if t := strings.Trim(w, " \t.,;:!?'\"`()"); t != "" {
		return t
	}
	return w
}

// exampleHost returns the host of an e-mail address or URL in s when it is a reserved
// example domain.
func exampleHost(s string) string {
	host := ""
	if at := strings.LastIndexByte(s, '@'); at >= 0 && !strings.ContainsAny(s, " /") {
		host = s[at+1:]
	} else if u, err := url.Parse(s); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	if host != "" && exampleHostRe.MatchString(host) {
		return host
	}
	return ""
}

// parsePatterns turns dotted paths and JSON pointers into segment lists.
func parsePatterns(fields []string) [][]string {
	out := make([][]string, 0, len(fields))
	for _, f := range fields {
		if strings.HasPrefix(f, "/") {
			segs := strings.Split(f[1:], "/")
			for i, s := range segs {
				segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
			}
			out = append(out, segs)
			continue
		}
		out = append(out, strings.Split(strings.TrimPrefix(f, "args."), "."))
	}
	return out
}

// matchAny reports whether path equals one of the patterns, "*" matching any segment.
func matchAny(patterns [][]string, path []string) bool {
	for _, p := range patterns {
		if len(p) != len(path) {
			continue
		}
		ok := true
		for i := range p {
			if p[i] != wildcard && p[i] != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
