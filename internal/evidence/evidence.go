// Package evidence is what a spec attaches to its report as data, beside Ginkgo's own record:
// the names of the report entries and the types of their values. The specs write them
// (AddReportEntry stores a value with its JSON representation, Value.AsJSON) and package
// reports reads them back, so the evidence travels from the spec to the matrix cell without
// being formatted to text and parsed again. It imports nothing of the module: the specs and the
// reports, which may not import each other, both import it.
package evidence

import (
	"encoding/json"
	"fmt"
)

// UnknownEntry names the report entry of a spec whose checkers could not vouch for its run
// (Jepsen's :unknown): the spec's own assertions passed, but its history of contract calls
// overflowed, so the checkers judged nothing. The reports turn such a pass into the result
// "unknown", which is never a pass.
const UnknownEntry = "pubsub-unknown"

// Unknown is the value of UnknownEntry.
type Unknown struct {
	// Reason says why the spec's result cannot be vouched for, for people.
	Reason string `json:"reason"`
	// Recorded and Dropped count the history's calls: those it kept and those that did not fit.
	Recorded int `json:"recorded"`
	Dropped  int `json:"dropped"`
}

// String is the entry's representation in Ginkgo's reports.
func (u Unknown) String() string { return "unknown: " + u.Reason }

// HistoryFull is the Unknown of a history that kept recorded calls and dropped the rest.
func HistoryFull(recorded, dropped int) Unknown {
	return Unknown{
		Reason: fmt.Sprintf("the history overflowed: %d calls after the first %d not recorded, so its checkers judged nothing",
			dropped, recorded),
		Recorded: recorded, Dropped: dropped,
	}
}

// Decode reads a report entry's value into v (a pointer to one of this package's types): raw
// is the value as the process that added the entry holds it (Ginkgo's GetRawValue: the typed
// value itself in that process, a JSON-decoded map elsewhere), asJSON its JSON (Value.AsJSON,
// set when the report was read from JSON). An entry of another shape is an error.
func Decode(raw any, asJSON string, v any) error {
	data := []byte(asJSON)
	if asJSON == "" {
		var err error
		if data, err = json.Marshal(raw); err != nil {
			return fmt.Errorf("report entry value: %w", err)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("report entry value: %w", err)
	}
	return nil
}
