package specs

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Behaviour declares the spec of catalogue entry id (specs/catalogue) as an It: its text is
// "[id] <title>", its labels "id:<id>", the area, the level and the entry's own (slow, fault),
// and its scheduling priority the entry's, so tools find the ID in the labels and people in the
// text. args are It's: decorators and the body.
func Behaviour(id string, args ...any) bool {
	b := entry(id)
	return It(b.SpecText(), append(decorators(b), args...)...)
}

// BehaviourTable declares the spec of catalogue entry id as a DescribeTable (one behaviour,
// several entries: each entry carries the labels). args are DescribeTable's.
func BehaviourTable(id string, args ...any) bool {
	b := entry(id)
	return DescribeTable(b.SpecText(), append(decorators(b), args...)...)
}

// decorators are what the catalogue entry says of its spec's node.
func decorators(b catalogue.Behaviour) []any {
	d := []any{Offset(1), Label(b.SpecLabels()...)}
	if b.Priority > 0 {
		d = append(d, SpecPriority(b.Priority))
	}
	return d
}

// entry finds id in the catalogue; an unknown ID is a programming error caught when the spec
// tree is built, before any spec runs.
func entry(id string) catalogue.Behaviour {
	b, ok := catalogue.Lookup(id)
	if !ok {
		panic(fmt.Sprintf("specs: behaviour %q is not in specs/catalogue: add its entry there first", id))
	}
	return b
}
