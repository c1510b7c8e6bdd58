// Package column is the name of a report column, formatted and parsed in this one place:
//
//	<backend>[~<variant>][@<release>][+isolated]
//
// backend is a registered backend ("kafka"), variant a known-bad variant of it
// (backends/mutants: "kafka~nack-noop" is also that variant's registry name), release the
// broker release when it is not the pinned one (docs/versions.md: "kafka@3.9.1"), and
// +isolated marks a run in isolation mode (docs/findings-and-isolation.md). The suite names
// its report files and results with String; the reports and the gate read names back with
// Parse. It is a base-layer package (internal/layers), so the suite, the reports, the bench
// and backends/mutants all use the same grammar.
package column

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

const (
	// VariantSep joins a backend and its known-bad variant: "kafka~nack-noop".
	VariantSep = "~"
	// ReleaseSep introduces a broker release that is not the pinned one: "kafka@3.9.1".
	ReleaseSep = "@"
	// IsolatedSuffix ends the name of a column run in isolation mode: "kafka+isolated".
	IsolatedSuffix = "+isolated"
)

// Column is one column of the matrix: a backend (or one of its known-bad variants) on one
// broker release, in or out of isolation mode.
type Column struct {
	// Backend is the registered backend ("kafka"); for a variant its base.
	Backend string
	// Variant is the known-bad variant after "~" ("nack-noop"); "" for none.
	Variant string
	// Release is the broker release after "@" ("3.9.1"); "" for the pinned release.
	Release string
	// Isolated is a run in isolation mode ("+isolated").
	Isolated bool
}

// String is the column's name: <backend>[~<variant>][@<release>][+isolated]. For a valid
// column (Validate) Parse reads it back to c.
func (c Column) String() string {
	s := c.Backend
	if c.Variant != "" {
		s += VariantSep + c.Variant
	}
	if c.Release != "" {
		s += ReleaseSep + c.Release
	}
	if c.Isolated {
		s += IsolatedSuffix
	}
	return s
}

// Registered is the registry name of the column's backend: the backend, or <backend>~<variant>
// for a known-bad variant (backends/mutants).
func (c Column) Registered() string {
	return Column{Backend: c.Backend, Variant: c.Variant}.String()
}

// Validate says what makes c unnameable: an empty backend, or a part that holds a
// separator ("~", "@", "+"), a space or a slash.
func (c Column) Validate() error {
	if c.Backend == "" {
		return errors.New("empty backend")
	}
	for _, p := range []struct{ what, v string }{{"backend", c.Backend}, {"variant", c.Variant}, {"release", c.Release}} {
		if err := CheckPart(p.what, p.v); err != nil {
			return err
		}
	}
	return nil
}

// CheckPart says why v cannot be a part of a column name (a backend, a variant, a release):
// it holds a separator ("~", "@", "+"), a space or control character, or a slash (names are
// also report file names). An empty v is not checked.
func CheckPart(what, v string) error {
	if i := strings.IndexFunc(v, func(r rune) bool {
		return strings.ContainsRune("~@+/\\", r) || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		return fmt.Errorf("%s %q: %q may not be in it", what, v, v[i:i+1])
	}
	return nil
}

// Parse reads a column name written by String. It fails on anything String does not write:
// an empty backend, variant or release, two of one separator, the suffixes out of their order
// (~ before @ before +isolated), a "+" suffix other than +isolated, a space or a slash.
func Parse(name string) (Column, error) {
	c, err := parse(name)
	if err != nil {
		return Column{}, fmt.Errorf("column name %q: %w", name, err)
	}
	return c, nil
}

func parse(name string) (Column, error) {
	var c Column
	s, isolated := strings.CutSuffix(name, IsolatedSuffix)
	c.Isolated = isolated
	if i := strings.Index(s, "+"); i >= 0 {
		if isolated && strings.HasSuffix(s, IsolatedSuffix) {
			return c, errors.New("two " + IsolatedSuffix)
		}
		if strings.HasPrefix(s[i:], IsolatedSuffix) {
			return c, errors.New(IsolatedSuffix + " must come last")
		}
		return c, fmt.Errorf("unknown suffix %q (the only one is %s)", s[i:], IsolatedSuffix)
	}
	s, release, hasRelease := strings.Cut(s, ReleaseSep)
	if hasRelease {
		switch {
		case release == "":
			return c, errors.New("empty release after " + ReleaseSep)
		case strings.Contains(release, ReleaseSep):
			return c, errors.New("two " + ReleaseSep)
		case strings.Contains(release, VariantSep):
			return c, errors.New(VariantSep + "<variant> must come before " + ReleaseSep + "<release>")
		}
		c.Release = release
	}
	backend, variant, hasVariant := strings.Cut(s, VariantSep)
	if hasVariant {
		switch {
		case variant == "":
			return c, errors.New("empty variant after " + VariantSep)
		case strings.Contains(variant, VariantSep):
			return c, errors.New("two " + VariantSep)
		}
		c.Variant = variant
	}
	c.Backend = backend
	if err := c.Validate(); err != nil {
		return Column{}, err
	}
	return c, nil
}

// OfBackend is the column of the registered backend name on the pinned release, out of
// isolation mode: "kafka~nack-noop" is {Backend: kafka, Variant: nack-noop}. A name that is
// not such a column (one holding "@" or "+") is a backend of that whole name.
func OfBackend(name string) Column {
	c, err := Parse(name)
	if err != nil || c.Release != "" || c.Isolated {
		return Column{Backend: name}
	}
	return c
}
