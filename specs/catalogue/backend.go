package catalogue

import "strings"

// BackendLabelPrefix starts the Ginkgo label that says which backend a spec runs on
// ("backend:kafka"): specs.Conformance puts it on each backend's container, and the suite
// reads a spec's backend from it (and only from it).
const BackendLabelPrefix = "backend:"

// BackendLabel is backend's label: "backend:kafka".
func BackendLabel(backend string) string { return BackendLabelPrefix + backend }

// BackendFromLabels returns the backend of the first "backend:<name>" label, or "".
func BackendFromLabels(labels []string) string {
	for _, l := range labels {
		if b, ok := strings.CutPrefix(l, BackendLabelPrefix); ok {
			return b
		}
	}
	return ""
}
