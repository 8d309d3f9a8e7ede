package repair

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/model"
)

// SystemText is the system message of every repair request, as the seed
// writes it.
const SystemText = "Your previous tool call was invalid.\n" +
	"Return a corrected tool call that matches the required schema exactly.\n" +
	"Do not invent missing information. If required information is unavailable, say what is missing."

// MaxRawArguments is how many characters (runes) of the previous raw
// arguments a repair request repeats; longer arguments are cut and "..." is
// appended.
const MaxRawArguments = 2000

// Per-class instructions, appended after the errors.
const (
	truncatedText = "Your previous tool call was cut off: the output ran out of tokens before the arguments were complete, " +
		"so the raw arguments above stop mid-way. Sending the same call again will be cut off again. " +
		"Send a smaller payload: fewer items, ids instead of full objects, only the optional fields that are needed, shorter text."
	invalidJSONText = "The arguments must be one JSON object: keys and strings in double quotes, no comments, no trailing commas, nothing before or after it."
	schemaText      = "The arguments are JSON but do not match the schema. Fix every error listed; keep the values that were already valid."
)

// Prompt builds the repair request for in: SystemText; a user text with the
// tool's name, description and schema, the previous raw arguments cut to
// MaxRawArguments, every error as "- ..." and an instruction per class
// (truncated: ask for a smaller payload; invalid_json: the parse error
// position; no_such_tool: the valid names). The tool is offered with forced
// tool choice unless in.AllowText.
//
// For no_such_tool the offered tool is Closest(in.Tool, in.ValidTools):
// forced choice needs exactly one tool, and offering all of them would put
// every schema in one prompt. The text still lists every valid name, and
// in.Description and in.Schema must describe that closest tool.
func Prompt(in Input) model.Request {
	offered := in.Tool
	var b strings.Builder
	if in.Failure == NoSuchTool {
		if c := Closest(in.Tool, in.ValidTools); c != "" {
			offered = c
		}
		fmt.Fprintf(&b, "You called a tool named %q, which does not exist.\n", in.Tool)
		fmt.Fprintf(&b, "Valid tools: %s.\n", strings.Join(in.ValidTools, ", "))
		fmt.Fprintf(&b, "The closest name is %q; it is the tool offered now. Call it with arguments that match its schema.\n", offered)
		if in.AllowText {
			b.WriteString("If none of the valid tools fits the task, do not call a tool; say so instead.\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Tool name: %s\n", offered)
	fmt.Fprintf(&b, "Tool description: %s\n", orNone(in.Description, "(none)"))
	fmt.Fprintf(&b, "Input schema: %s\n", compactSchema(in.Schema))
	fmt.Fprintf(&b, "Previous raw arguments: %s\n", cutRunes(in.RawArguments, MaxRawArguments))
	b.WriteString("Validation errors:\n")
	for _, e := range in.Errors {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	if len(in.Errors) == 0 {
		b.WriteString("- (no detail was recorded)\n")
	}
	b.WriteString("\n")
	switch in.Failure {
	case Truncated:
		b.WriteString(truncatedText + "\n")
	case InvalidJSON:
		if pos := jsonErrorAt(in.RawArguments); pos != "" {
			b.WriteString("JSON parse error " + pos + "\n")
		}
		b.WriteString(invalidJSONText + "\n")
	case SchemaInvalid:
		b.WriteString(schemaText + "\n")
	}
	fmt.Fprintf(&b, "This is repair attempt %d of %d.", in.Attempts+1, max(in.maxAttempts(), in.Attempts+1))
	choice := model.ChoiceForced
	if in.AllowText {
		choice = model.ChoiceAuto
	}
	return model.Request{
		System: SystemText,
		User:   b.String(),
		Tool:   model.Tool{Name: offered, Description: in.Description, Schema: in.Schema},
		Choice: choice,
	}
}

func orNone(s, none string) string {
	if strings.TrimSpace(s) == "" {
		return none
	}
	return s
}

// compactSchema writes the schema on one line; an empty one accepts any
// object.
func compactSchema(s json.RawMessage) string {
	if len(bytes.TrimSpace(s)) == 0 {
		return `{"type":"object"}`
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, s); err != nil {
		return string(s)
	}
	return buf.String()
}

// cutRunes keeps the first n runes of s and appends "..." when it cut.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "..."
		}
		i++
	}
	return s
}

// jsonErrorAt describes where raw stops being JSON: "at line L, column C
// (byte O): <message>, near: <excerpt>" with >>HERE<< at the point. It is ""
// when raw is valid JSON.
func jsonErrorAt(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "at byte 0: the arguments are empty"
	}
	var v any
	err := json.Unmarshal([]byte(raw), &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return ""
	}
	// Offset counts the offending byte; at the end of input there is none.
	off := min(max(int(se.Offset), 0), len(raw))
	if off > 0 && !strings.HasPrefix(se.Error(), "unexpected end") {
		off--
	}
	// Since Go 1.25 encoding/json reports the offset of the byte the
	// decoder stopped at, which can be inside a multi-byte rune: point at
	// the rune's start (never more than a rune back: invalid UTF-8).
	for n := 0; n < utf8.UTFMax-1 && off > 0 && off < len(raw) && !utf8.RuneStart(raw[off]); n++ {
		off--
	}
	line := 1 + strings.Count(raw[:off], "\n")
	col := off - strings.LastIndex(raw[:off], "\n")
	return fmt.Sprintf("at line %d, column %d (byte %d): %s, near: %s", line, col, off, se.Error(), excerpt(raw, off))
}

// excerptRadius is how many bytes of context excerpt keeps on each side.
const excerptRadius = 30

// excerpt shows raw around off with >>HERE<< at off, on one line.
func excerpt(raw string, off int) string {
	lo, hi := max(off-excerptRadius, 0), min(off+excerptRadius, len(raw))
	// Move to rune boundaries, but never by more than a rune's length:
	// invalid UTF-8 can be continuation bytes all the way.
	for n := 0; n < utf8.UTFMax-1 && lo > 0 && lo < len(raw) && raw[lo]&0xC0 == 0x80; n++ {
		lo--
	}
	for n := 0; n < utf8.UTFMax-1 && hi < len(raw) && raw[hi]&0xC0 == 0x80; n++ {
		hi++
	}
	esc := strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)
	return esc.Replace(raw[lo:off]) + ">>HERE<<" + esc.Replace(raw[off:hi])
}
