package reports

import (
	"fmt"
	"strings"
)

// The exit statuses of one conformance run (make conformance, compare -run-verdict), as
// pytest's xfail: a failure the baseline accepts for its column is a known result, not a
// broken build.
const (
	// ExitAccepted: every failure is one the baseline accepts for that column (and level).
	ExitAccepted = 0
	// ExitFailed: anything else failed - a new failure, a pass -> fail regression, a newly
	// skipped or missing spec, an unknown result where the baseline accepts a pass (or has no
	// entry), any failure or unknown of a column the baseline does not judge (a backend it has
	// no entry for) - or, strict, any failure or unknown at all.
	ExitFailed = 1
	// ExitCouldNotRun: the harness could not run - a broker or backend that could not start
	// (a failed BeforeSuite), an interrupted run, a missing report.
	ExitCouldNotRun = 2
)

// RunExitOptions tune RunExit.
type RunExitOptions struct {
	// Strict makes every failure ExitFailed, accepted or not (CONFORMANCE_STRICT=1).
	Strict bool
	// Baseline names the baseline file in the line ("ci/baseline.yaml").
	Baseline string
}

// listMax is how many results a line names before "and N more".
const listMax = 8

// RunExit is the exit status of the run whose matrix is m, judged by the gate g (GateWith of
// m against the baseline, at the run's level), and the one line that says why: the last line
// a conformance run prints. A failure is accepted only when the gate compared its column and
// found no blocking change for it: the baseline lists exactly that failure for that column
// (or it is a SHOULD failure below the gate's level).
func RunExit(m *Matrix, g *GateResult, o RunExitOptions) (int, string) {
	base := o.Baseline
	if base == "" {
		base = "the baseline"
	}
	// Could not run: one cause per distinct reason, with the columns it stopped.
	var why []string
	cols := map[string][]string{}
	for _, b := range m.Backends {
		w := b.SetupFailure
		if w == "" && b.Interrupted != "" {
			w = "the run was interrupted (" + b.Interrupted + "): its results are no verdict"
		}
		if w == "" {
			continue
		}
		w = strings.Join(strings.Fields(w), " ")
		if cols[w] == nil {
			why = append(why, w)
		}
		cols[w] = append(cols[w], b.Label)
	}
	if len(why) > 0 {
		parts := make([]string, len(why))
		for i, w := range why {
			parts[i] = strings.Join(cols[w], ", ") + ": " + w
		}
		return ExitCouldNotRun, "conformance: exit 2, the harness could not run: " + strings.Join(parts, "; ")
	}

	judged := map[string]bool{}
	for _, c := range g.Columns {
		judged[c] = true
	}
	type key struct{ backend, id string }
	listed := map[key]bool{}
	below := map[key]bool{}
	var unaccepted []string
	for _, c := range g.Changes {
		k := key{c.Backend, c.ID}
		switch {
		case c.Blocking():
			listed[k] = true
			unaccepted = append(unaccepted, fmt.Sprintf("%s %s (%s)", c.Backend, c.ID, c.Kind))
		case c.BelowLevel && c.Kind == NewFailure:
			below[k] = true
		}
	}
	accepted, belowLevel, unknown := &grouped{}, &grouped{}, &grouped{}
	for i, b := range m.Backends {
		for _, r := range m.Rows {
			st := r.Cells[i].Status
			if st != Fail && st != Unknown {
				continue
			}
			k := key{b.Label, r.Key}
			what := "failed"
			if st == Unknown {
				what = "unknown"
			}
			switch {
			case listed[k]:
			case !judged[b.Label]:
				unaccepted = append(unaccepted, fmt.Sprintf("%s %s (%s; %s judges no %s column)", b.Label, r.Key, what, base, b.Label))
			case st == Unknown:
				// Not blocking: the baseline accepts a failure or skip there, or it is a SHOULD
				// below the gate's level. Said in the line, never counted as a pass.
				unknown.add(b.Label, r.Key)
			case below[k]:
				belowLevel.add(b.Label, r.Key)
			default:
				accepted.add(b.Label, r.Key)
			}
		}
	}
	if len(unaccepted) > 0 {
		return ExitFailed, fmt.Sprintf("conformance: exit 1: %s %s does not accept: %s",
			plural(len(unaccepted), "result"), base, limit(unaccepted))
	}
	n := accepted.n + belowLevel.n + unknown.n
	if n == 0 {
		return ExitAccepted, fmt.Sprintf("conformance: exit 0: no failures (%s checked against %s)", plural(g.Checked, "result"), base)
	}
	var what []string
	if accepted.n > 0 {
		what = append(what, fmt.Sprintf("%s accepted by %s for its column (%s)", plural(accepted.n, "failure"), base, accepted))
	}
	if belowLevel.n > 0 {
		what = append(what, fmt.Sprintf("%s %s does not list, not blocking at gate level must (%s)", plural(belowLevel.n, "SHOULD failure"), base, belowLevel))
	}
	if unknown.n > 0 {
		what = append(what, fmt.Sprintf("%s where %s accepts no pass or below the gate's level (%s)", plural(unknown.n, "unknown result"), base, unknown))
	}
	if o.Strict {
		return ExitFailed, "conformance: exit 1 (CONFORMANCE_STRICT=1, any failure or unknown): " + strings.Join(what, "; ")
	}
	return ExitAccepted, "conformance: exit 0: " + strings.Join(what, "; ") + "; CONFORMANCE_STRICT=1 exits 1 on them"
}

// grouped collects spec IDs per column in order: "rabbitmq R6 R7, kafka W1".
type grouped struct {
	order []string
	ids   map[string][]string
	n     int
}

func (g *grouped) add(col, id string) {
	if g.ids == nil {
		g.ids = map[string][]string{}
	}
	if g.ids[col] == nil {
		g.order = append(g.order, col)
	}
	g.ids[col] = append(g.ids[col], id)
	g.n++
}

func (g *grouped) String() string {
	parts := make([]string, len(g.order))
	for i, c := range g.order {
		parts[i] = c + " " + strings.Join(g.ids[c], " ")
	}
	return strings.Join(parts, ", ")
}

// limit joins the first listMax items and counts the rest (the gate's report above lists all).
func limit(items []string) string {
	if len(items) <= listMax {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:listMax], ", ") + fmt.Sprintf(" and %d more (listed above)", len(items)-listMax)
}
