package repair

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/model"
)

var invoiceSchema = []byte(`{
  "type": "object",
  "properties": {"customer_id": {"type": "string"}, "amount": {"type": "number"}},
  "required": ["customer_id", "amount"]
}`)

func invoiceInput(f Failure, raw string, errs ...string) Input {
	return Input{Failure: f, Tool: "create_invoice", Description: "Create an invoice for a customer",
		Schema: invoiceSchema, RawArguments: raw, Errors: errs}
}

func TestPrompt_carries_seed_text_tool_schema_and_every_error(t *testing.T) {
	req := Prompt(invoiceInput(SchemaInvalid, `{"amount":"5"}`, "/amount: expected number, got string", "/: missing property customer_id"))
	for _, want := range []string{
		"Your previous tool call was invalid.",
		"Return a corrected tool call that matches the required schema exactly.",
		"Do not invent missing information. If required information is unavailable, say what is missing.",
	} {
		if !strings.Contains(req.System, want) {
			t.Errorf("system text lacks %q", want)
		}
	}
	for _, want := range []string{
		"Tool name: create_invoice\n",
		"Tool description: Create an invoice for a customer\n",
		`Input schema: {"type":"object","properties":{"customer_id":{"type":"string"},"amount":{"type":"number"}},"required":["customer_id","amount"]}` + "\n",
		`Previous raw arguments: {"amount":"5"}` + "\n",
		"Validation errors:\n- /amount: expected number, got string\n- /: missing property customer_id\n",
		"Fix every error listed",
		"repair attempt 1 of 1",
	} {
		if !strings.Contains(req.User, want) {
			t.Errorf("user text lacks %q:\n%s", want, req.User)
		}
	}
	if req.Tool.Name != "create_invoice" || string(req.Tool.Schema) != string(invoiceSchema) || req.Tool.Description == "" {
		t.Errorf("offered tool = %+v", req.Tool)
	}
	if req.Choice != model.ChoiceForced {
		t.Errorf("choice = %v, want forced", req.Choice)
	}
}

func TestPrompt_cuts_raw_arguments_at_2000_characters(t *testing.T) {
	long := `{"note":"` + strings.Repeat("é", 2500) + `"}`
	req := Prompt(invoiceInput(SchemaInvalid, long, "too long"))
	line := lineWith(req.User, "Previous raw arguments: ")
	got := strings.TrimPrefix(line, "Previous raw arguments: ")
	if !strings.HasSuffix(got, "...") || utf8.RuneCountInString(strings.TrimSuffix(got, "...")) != MaxRawArguments {
		t.Fatalf("raw arguments kept %d runes (suffix %q), want %d and \"...\"",
			utf8.RuneCountInString(got), got[len(got)-5:], MaxRawArguments)
	}
	if !utf8.ValidString(got) {
		t.Error("cut split a character")
	}
	exact := strings.Repeat("a", MaxRawArguments)
	if got := lineWith(Prompt(invoiceInput(SchemaInvalid, exact)).User, "Previous raw arguments: "); strings.HasSuffix(got, "...") {
		t.Error("arguments of exactly 2000 characters must not be cut")
	}
}

func TestPrompt_truncated_asks_for_a_smaller_payload(t *testing.T) {
	req := Prompt(invoiceInput(Truncated, `{"customer_id":"c1","lines":[{"sku":"a"},{"sku":`, "parse: truncated: finish reason length"))
	for _, want := range []string{"cut off", "smaller payload", "fewer items", "ids instead of full objects"} {
		if !strings.Contains(req.User, want) {
			t.Errorf("truncated prompt lacks %q:\n%s", want, req.User)
		}
	}
	if strings.Contains(req.User, "JSON parse error") {
		t.Error("truncated prompt should ask for less, not point at a parse position")
	}
}

func TestPrompt_invalid_json_includes_the_parse_error_position(t *testing.T) {
	raw := "{\"customer_id\": \"c1\",\n \"amount\": 5,}"
	req := Prompt(invoiceInput(InvalidJSON, raw, "parse: invalid_json: trailing comma"))
	line := lineWith(req.User, "JSON parse error ")
	if !strings.Contains(line, "at line 2, column 14 (byte 35)") || !strings.Contains(line, `"amount": 5,>>HERE<<}`) || !strings.Contains(line, "invalid character '}'") {
		t.Fatalf("parse position line = %q", line)
	}
	if !strings.Contains(req.User, "double quotes") {
		t.Errorf("invalid_json prompt lacks the format instruction:\n%s", req.User)
	}
	cut := lineWith(Prompt(invoiceInput(InvalidJSON, `{"customer_id": "c`, "x")).User, "JSON parse error ")
	if !strings.Contains(cut, "(byte 18): unexpected end of JSON input") || !strings.HasSuffix(cut, `"c>>HERE<<`) {
		t.Errorf("unclosed arguments: %q", cut)
	}
	if got := lineWith(Prompt(invoiceInput(InvalidJSON, "", "empty")).User, "JSON parse error "); !strings.Contains(got, "empty") {
		t.Errorf("empty arguments: %q", got)
	}
}

func TestPrompt_no_such_tool_lists_valid_names_and_offers_the_closest(t *testing.T) {
	in := Input{Failure: NoSuchTool, Tool: "send_mail", ValidTools: []string{"create_invoice", "send_email", "refund_payment"},
		Description: "Send an email", Schema: []byte(`{"type":"object"}`), RawArguments: `{"to":"a@b.c"}`,
		Errors: []string{"no tool named send_mail"}}
	req := Prompt(in)
	for _, want := range []string{
		`You called a tool named "send_mail", which does not exist.`,
		"Valid tools: create_invoice, send_email, refund_payment.",
		`The closest name is "send_email"`,
		"Tool name: send_email\n",
	} {
		if !strings.Contains(req.User, want) {
			t.Errorf("no_such_tool prompt lacks %q:\n%s", want, req.User)
		}
	}
	if req.Tool.Name != "send_email" || req.Tool.Description != "Send an email" {
		t.Errorf("offered tool = %+v, want send_email", req.Tool)
	}
}

func TestPrompt_without_errors_or_schema_still_says_so(t *testing.T) {
	req := Prompt(Input{Failure: SchemaInvalid, Tool: "t", RawArguments: "{}", AllowText: true, MaxAttempts: 2, Attempts: 1})
	for _, want := range []string{"- (no detail was recorded)", `Input schema: {"type":"object"}`, "Tool description: (none)", "repair attempt 2 of 2"} {
		if !strings.Contains(req.User, want) {
			t.Errorf("user text lacks %q:\n%s", want, req.User)
		}
	}
	if req.Choice != model.ChoiceAuto {
		t.Errorf("AllowText: choice = %v, want auto", req.Choice)
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestPrompt_excerpt_of_invalid_utf8_stays_short(t *testing.T) {
	raw := "\u06ef" + strings.Repeat("\xaf", 5000) // continuation bytes all the way
	req := Prompt(Input{Failure: InvalidJSON, Tool: "t", RawArguments: raw, Errors: []string{"e"}})
	if strings.Contains(req.User, raw) || len(req.User) > 2*MaxRawArguments+1000 {
		t.Fatalf("prompt of %d bytes repeats the raw arguments beyond the cut", len(req.User))
	}
}
