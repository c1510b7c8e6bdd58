package envvars

import (
	"slices"
	"strings"
	"testing"
)

func TestFamiliesAndSecrets(t *testing.T) {
	tb := Table{
		{Name: "K_HOST", Meaning: "h", Default: "localhost"},
		{Name: "K_PASSWORD", Meaning: "p", Secret: true},
		{Name: "K_CONFIG_<KEY>", Meaning: "c", SecretIf: []string{"K_CONFIG_*PASSWORD*"}},
	}
	if got := tb.Names(); !slices.Equal(got, []string{"K_HOST", "K_PASSWORD", "K_CONFIG_*"}) {
		t.Errorf("Names = %v", got)
	}
	for name, want := range map[string]bool{"K_HOST": false, "K_PASSWORD": true, "K_CONFIG_SASL_PASSWORD": true, "K_CONFIG_ACKS": false} {
		if got := tb.IsSecret(name); got != want {
			t.Errorf("IsSecret(%s) = %v", name, got)
		}
	}
	if v, ok := tb.Lookup("K_CONFIG_ACKS"); !ok || v.Meaning != "c" {
		t.Errorf("Lookup(K_CONFIG_ACKS) = %+v, %v", v, ok)
	}
	if _, ok := tb.Lookup("K_CONFIG_"); ok {
		t.Error("the bare prefix is no member of its family")
	}
	md := tb.Markdown()
	for _, want := range []string{"| `K_HOST` | h | `localhost` |  |", "| `K_PASSWORD` | p |  | yes |", "| `K_CONFIG_<KEY>` | c |  | when the name matches `K_CONFIG_*PASSWORD*` |"} {
		if !strings.Contains(md, want+"\n") {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestHarnessTable(t *testing.T) {
	for _, v := range Harness {
		if v.Name == "" || v.Meaning == "" || v.Secret {
			t.Errorf("%+v: a harness row needs a name and a meaning, and none is secret", v)
		}
	}
}
