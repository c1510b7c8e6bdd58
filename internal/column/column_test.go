package column

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Every combination of the three suffixes, in the suite's order, formats as the names the
// suite writes today and parses back to the same column.
func TestEveryCombinationFormatsAndParses(t *testing.T) {
	for _, backend := range []string{"kafka", "trustgraph-kafka-sync", "pulsar-persistent"} {
		for _, variant := range []string{"", "latest-race", "ack-noop"} {
			for _, release := range []string{"", "3.9.1", "4.0.0-rc1"} {
				for _, isolated := range []bool{false, true} {
					want := backend
					if variant != "" {
						want += "~" + variant
					}
					if release != "" {
						want += "@" + release
					}
					if isolated {
						want += "+isolated"
					}
					c := Column{Backend: backend, Variant: variant, Release: release, Isolated: isolated}
					if got := c.String(); got != want {
						t.Errorf("%+v: %q, want %q", c, got, want)
					}
					back, err := Parse(want)
					if err != nil || back != c {
						t.Errorf("Parse(%q) = %+v, %v; want %+v", want, back, err, c)
					}
					reg := backend
					if variant != "" {
						reg += "~" + variant
					}
					if got := back.Registered(); got != reg {
						t.Errorf("%q: registry name %q, want %q", want, got, reg)
					}
				}
			}
		}
	}
}

// The names of today's reports and baseline, spelled out.
func TestTodaysNames(t *testing.T) {
	for name, want := range map[string]Column{
		"kafka":                   {Backend: "kafka"},
		"kafka~latest-race":       {Backend: "kafka", Variant: "latest-race"},
		"kafka@3.9.1":             {Backend: "kafka", Release: "3.9.1"},
		"kafka+isolated":          {Backend: "kafka", Isolated: true},
		"kafka~latest-race@3.9.1": {Backend: "kafka", Variant: "latest-race", Release: "3.9.1"},
		"kafka@3.9.1+isolated":    {Backend: "kafka", Release: "3.9.1", Isolated: true},
		"rabbitmq@4.3.6":          {Backend: "rabbitmq", Release: "4.3.6"},
		"trustgraph-kafka-sync~ack-noop@4.0.0-rc1+isolated": {Backend: "trustgraph-kafka-sync", Variant: "ack-noop", Release: "4.0.0-rc1", Isolated: true},
	} {
		got, err := Parse(name)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", name, got, err, want)
		}
		if got.String() != name {
			t.Errorf("%q: formats back as %q", name, got.String())
		}
	}
}

func TestMalformedNamesAreRejected(t *testing.T) {
	for name, why := range map[string]string{
		"":                        "empty backend",
		"~latest-race":            "empty backend",
		"@3.9.1":                  "empty backend",
		"+isolated":               "empty backend",
		"kafka~":                  "empty variant",
		"kafka@":                  "empty release",
		"kafka@+isolated":         "empty release",
		"kafka@3.9.1@4.0.0":       "two @",
		"kafka~a~b":               "two ~",
		"kafka@3.9.1~latest-race": "must come before",
		"kafka+isolated@3.9.1":    "must come last",
		"kafka+isolated~x":        "must come last",
		"kafka+isolated+isolated": "two +isolated",
		"kafka+other":             "unknown suffix",
		"kafka@3.9.1+build":       "unknown suffix",
		"kafka+":                  "unknown suffix",
		"+other":                  "unknown suffix",
		"kafka+other+isolated":    "unknown suffix",
		"kafka@3.9.1+x+isolated":  "unknown suffix",
		"kafka go":                "may not be in it",
		"kafka/x":                 "may not be in it",
		"kafka\\x":                "may not be in it", // a path separator too, where report files are read
		"kafka@3.9.1\x1b[31m":     "may not be in it", // a control character that is no space
		"kafka~a\x7f":             "may not be in it",
		"kafka@3.9.1 ":            "may not be in it",
		"kafka~a\tb":              "may not be in it",
	} {
		c, err := Parse(name)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error (%s)", name, c, why)
			continue
		}
		if !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "column name") {
			t.Errorf("Parse(%q): %v, want it to say %q", name, err, why)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Column{{}, {Variant: "x"}, {Backend: "a~b"}, {Backend: "kafka", Variant: "x@y"}, {Backend: "kafka", Release: "1+2"}, {Backend: "kafka", Release: "a b"},
		// a separator as a part's first character
		{Backend: "/kafka"}, {Backend: "kafka", Variant: "@x"}, {Backend: "kafka", Release: " 3.9.1"}} {
		if c.Validate() == nil {
			t.Errorf("%+v: valid", c)
		}
	}
	if err := CheckPart("variant", "nack-noop"); err != nil {
		t.Error(err)
	}
}

// OfBackend reads a registry name: a variant's is its base and variant; a name that is not a
// column's on the pinned release stays whole.
func TestOfBackend(t *testing.T) {
	for name, want := range map[string]Column{
		"kafka":           {Backend: "kafka"},
		"kafka~nack-noop": {Backend: "kafka", Variant: "nack-noop"},
		"odd@name":        {Backend: "odd@name"},
		"odd+isolated":    {Backend: "odd+isolated"},
		"odd name":        {Backend: "odd name"},
	} {
		if got := OfBackend(name); got != want {
			t.Errorf("OfBackend(%q) = %+v, want %+v", name, got, want)
		}
		if got := OfBackend(name).String(); got != name {
			t.Errorf("OfBackend(%q) formats as %q", name, got)
		}
	}
}

// part draws a backend, variant or release: mostly name-like, sometimes any string.
func part(t *rapid.T, label string, optional bool) string {
	p := rapid.OneOf(
		rapid.StringMatching(`[a-z0-9][a-z0-9._-]{0,12}`),
		rapid.String(),
	).Draw(t, label)
	if optional && rapid.Bool().Draw(t, label+"-empty") {
		return ""
	}
	return p
}

// Parse is String's exact inverse: a valid column formats to a name that parses back to it,
// an invalid one to a name that Parse rejects or reads as another column (never silently as
// itself); and every name Parse accepts formats back to itself.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Column{
			Backend:  part(t, "backend", false),
			Variant:  part(t, "variant", true),
			Release:  part(t, "release", true),
			Isolated: rapid.Bool().Draw(t, "isolated"),
		}
		back, err := Parse(c.String())
		if c.Validate() == nil {
			if err != nil || back != c {
				t.Fatalf("%+v: %q parses as %+v, %v", c, c.String(), back, err)
			}
		} else if err == nil && back == c {
			t.Fatalf("invalid %+v parses back to itself from %q", c, c.String())
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z~@+.0-9-]{0,20}(\+isolated)?`)).Draw(t, "name")
		c, err := Parse(name)
		if err != nil {
			return
		}
		if c.String() != name || c.Validate() != nil {
			t.Fatalf("Parse(%q) = %+v, which formats as %q", name, c, c.String())
		}
	})
}
