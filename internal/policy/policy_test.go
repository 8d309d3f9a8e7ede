package policy

import (
	"strings"
	"testing"
)

func ptr(b bool) *bool { return &b }

func mustCompile(t testing.TB, p *Policy) *Compiled {
	t.Helper()
	c, err := Compile(p)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return c
}

func TestDecide_delete_customer_account_needs_admin(t *testing.T) {
	c := mustCompile(t, &Policy{Risk: RiskIrreversible, Allow: `"admin" in roles`})
	args := map[string]any{"customer_id": "cus_9821"}

	d := c.Decide(Input{Tool: "delete_customer_account", Args: args, Tenant: "acme", Principal: "bob", Roles: []string{"support"}})
	if d.Allowed || d.NeedsApproval {
		t.Fatalf("non-admin: got %+v, want denied", d)
	}
	for _, w := range []string{`principal "bob"`, "support", "delete_customer_account", `"admin" in roles`} {
		if !strings.Contains(d.Reason, w) {
			t.Errorf("reason %q does not mention %q", d.Reason, w)
		}
	}
	if d.Risk != RiskIrreversible {
		t.Errorf("risk %q, want irreversible", d.Risk)
	}

	d = c.Decide(Input{Tool: "delete_customer_account", Args: args, Tenant: "acme", Principal: "ann", Roles: []string{"support", "admin"}})
	if !d.Allowed || !d.NeedsApproval {
		t.Errorf("admin: got %+v, want allowed with approval (irreversible default)", d)
	}
}

func TestDecide_no_policy_denies_by_default(t *testing.T) {
	for _, c := range []*Compiled{mustCompile(t, nil), nil} {
		d := c.Decide(Input{Tool: "wire_money", Principal: "root", Roles: []string{"admin"}})
		if d.Allowed {
			t.Errorf("got %+v, want denied", d)
		}
		if want := "tool wire_money has no policy: add policy to its definition, or give it one with toolgate tools apply --policy FILE"; d.Reason != want {
			t.Errorf("reason %q, want %q", d.Reason, want)
		}
	}
}

func TestDecide_approval_follows_risk_unless_configured(t *testing.T) {
	for _, test := range []struct {
		name     string
		p        Policy
		approval bool
	}{
		{"read", Policy{Risk: RiskRead}, false},
		{"write", Policy{Risk: RiskWrite}, false},
		{"irreversible_default", Policy{Risk: RiskIrreversible}, true},
		{"irreversible_explicitly_without", Policy{Risk: RiskIrreversible, Approval: ptr(false)}, false},
		{"write_with_approval", Policy{Risk: RiskWrite, Approval: ptr(true)}, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			d := mustCompile(t, &test.p).Decide(Input{Tool: "t", Principal: "ann"})
			if !d.Allowed || d.NeedsApproval != test.approval {
				t.Errorf("got %+v, want allowed with NeedsApproval=%v", d, test.approval)
			}
			if test.approval && !strings.Contains(d.Reason, "approves") {
				t.Errorf("reason %q does not say a human must approve", d.Reason)
			}
		})
	}
}

func TestDecide_allow_reads_principal_tenant_tool_and_args(t *testing.T) {
	c := mustCompile(t, &Policy{Risk: RiskWrite, DryRun: true,
		Allow: `tenant == "acme" && tool.startsWith("create_") && (principal == "ann" || args.amount < 100)`})
	for _, test := range []struct {
		name string
		in   Input
		want bool
	}{
		{"ann_any_amount", Input{Tool: "create_invoice", Tenant: "acme", Principal: "ann", Args: map[string]any{"amount": 5000}}, true},
		{"bob_small_amount", Input{Tool: "create_invoice", Tenant: "acme", Principal: "bob", Args: map[string]any{"amount": 99}}, true},
		{"bob_large_amount", Input{Tool: "create_invoice", Tenant: "acme", Principal: "bob", Args: map[string]any{"amount": 100}}, false},
		{"other_tenant", Input{Tool: "create_invoice", Tenant: "globex", Principal: "ann"}, false},
		{"bob_missing_amount_fails_closed", Input{Tool: "create_invoice", Tenant: "acme", Principal: "bob"}, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			d := c.Decide(test.in)
			if d.Allowed != test.want || !d.DryRun || d.Reason == "" {
				t.Errorf("got %+v, want Allowed=%v, DryRun, a reason", d, test.want)
			}
		})
	}
}

func TestDecide_args_from_json_numbers(t *testing.T) {
	c := mustCompile(t, &Policy{Risk: RiskWrite, Allow: `args.amount * 2 <= 200`})
	args := decode(t, `{"amount": 100.0}`)
	if d := c.Decide(Input{Tool: "pay", Args: args}); !d.Allowed {
		t.Errorf("got %+v, want allowed", d)
	}
}

func TestCompile_refuses_broken_policies(t *testing.T) {
	for _, test := range []struct {
		name string
		p    Policy
		want string
	}{
		{"no_risk", Policy{}, `policy: risk "" is unknown: use "read", "write" or "irreversible"`},
		{"bad_risk", Policy{Risk: "dangerous"}, `risk "dangerous" is unknown`},
		{"misspelt_variable", Policy{Risk: RiskRead, Allow: `"admin" in role`}, "policy: allow: undeclared reference to 'role' (did you mean 'roles'?)"},
		{"not_bool", Policy{Risk: RiskRead, Allow: `principal`}, "policy: allow: expression evaluates to string, not bool"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := Compile(&test.p)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("err = %v, want it to contain %q", err, test.want)
			}
		})
	}
}

func TestCompile_copies_the_policy(t *testing.T) {
	p := &Policy{Risk: RiskRead}
	c := mustCompile(t, p)
	p.Risk = RiskIrreversible
	if c.Risk() != RiskRead {
		t.Errorf("risk %q after the caller changed its policy, want read", c.Risk())
	}
}

// Before, a denial of a call without a principal read `principal "" (no
// roles) may not call …`; now it says principal none.
func TestDecide_a_call_without_a_principal_is_named_none(t *testing.T) {
	c := mustCompile(t, &Policy{Risk: RiskWrite, Allow: `principal == "ann"`})
	d := c.Decide(Input{Tool: "create_invoice"})
	if want := "principal none (no roles) may not call create_invoice"; d.Allowed || !strings.Contains(d.Reason, want) {
		t.Errorf("reason %q, want it to start %q", d.Reason, want)
	}
}
