package modelclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/model"
)

func TestConfig_api_key_never_printed_or_marshalled(t *testing.T) {
	const key = "sk-ant-very-secret"
	c := model.Config{Protocol: model.ProtocolAnthropic, Endpoint: "https://api.anthropic.com", Model: "claude", APIKey: key}
	cl, err := NewClient(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{"json": string(js)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		outs["config "+verb] = fmt.Sprintf(verb, c)
		outs["*config "+verb] = fmt.Sprintf(verb, &c)
		outs["client "+verb] = fmt.Sprintf(verb, cl)
	}
	outs["nested"] = fmt.Sprintf("%+v", struct{ Repair model.Config }{c})
	for name, out := range outs {
		if strings.Contains(out, key) {
			t.Errorf("%s prints the key: %s", name, out)
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("%s does not say the key is set: %s", name, out)
		}
	}
	if !strings.Contains(outs["config %+v"], "Model:claude") {
		t.Errorf("%%+v lost the other fields: %s", outs["config %+v"])
	}
}
