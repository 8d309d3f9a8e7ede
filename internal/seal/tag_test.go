package seal

import "testing"

// A tag verifies with the stage's keys for exactly the fields it was made
// over, and with no other stage's key; without a key there is none.
func TestTag_proves_the_fields_with_the_stages_key(t *testing.T) {
	kr, err := Ephemeral([]string{"accumulate", "repair"})
	if err != nil {
		t.Fatal(err)
	}
	tag := kr.Tag("accumulate", "subject", "response", "hash")
	if tag == "" || !kr.TagValid("accumulate", tag, "subject", "response", "hash") {
		t.Fatalf("tag %q does not verify", tag)
	}
	for _, c := range []struct {
		stage  string
		tag    string
		fields []string
	}{
		{"accumulate", tag, []string{"subject", "response", "other"}},
		{"accumulate", tag, []string{"subjectresponse", "hash"}},
		{"repair", tag, []string{"subject", "response", "hash"}},
		{"accumulate", kr.Tag("repair", "subject", "response", "hash"), []string{"subject", "response", "hash"}},
		{"accumulate", "no-colon", []string{"subject", "response", "hash"}},
	} {
		if kr.TagValid(c.stage, c.tag, c.fields...) {
			t.Errorf("tag %q verified for %s %v", c.tag, c.stage, c.fields)
		}
	}
	other, _ := Ephemeral([]string{"accumulate"})
	if other.TagValid("accumulate", tag, "subject", "response", "hash") {
		t.Error("a tag verified with another keyring's key")
	}
	var none *Keyring
	if none.Tag("accumulate", "x") != "" || none.TagValid("accumulate", tag, "subject", "response", "hash") {
		t.Error("no keyring made or verified a tag")
	}
}
