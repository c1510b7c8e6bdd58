package reports

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pubsub-conformance/harness/internal/evidence"
)

// A Finding is one cause behind failures of one column: the failed behaviours whose first
// failure has the same cause key (CauseOf), so that a defect that breaks every spec (a topic
// that is never created, a client that cannot connect) reads as one finding blocking N specs,
// not N red cells.
type Finding struct {
	N       int    // 1-based, per column, in the order the findings are listed (most specs first)
	Key     string // the cause key shared by the specs (CauseOf)
	Cause   Cause  // the cause as the first spec (First) showed it
	IDs     []string
	Must    bool     // a MUST behaviour is among IDs: the finding breaks TrustGraph's contract
	First   string   // the spec that shows it first: IDs' first in catalogue order
	Calls   []string // the failing calls seen across IDs ("producer.send x3"), when known
	Message string   // First's one-line failure, for people
}

// Cause is what a failure message says about why, reduced to what specs failing for the same
// reason share.
type Cause struct {
	// Key groups failures: Kind, then the Clue with every run-specific token (topic and
	// subscription names, durations, addresses, numbers, quoted payloads) replaced by a
	// placeholder.
	Key string
	// Call is the failing call when the message names one: the wrapped client's call
	// ("ensure_topic + create_consumer", "producer.send") or else the contract call the spec made
	// ("Consumer", "Send").
	Call string
	// Kind: "hang" (a call that did not return within its bound, a deadline, "timed out"),
	// "error" (a call that returned an error), "assertion" (the spec saw a wrong result).
	Kind string
	// Clue is the most specific text behind the failure: what the wrapped client logged while
	// the call hung ("...logged: <line>") or the error text after the call's name, else the
	// assertion's first line; normalised.
	Clue string
	// Direct: the clue is in the failure's one-line cause (Case.Message), not only in a list
	// the assertion printed or in the history; such a spec is the better one to show first.
	Direct bool
}

// The placeholders are plain words, so a key reads as a sentence.
var (
	// unique names (specs.unique): <what>-<6 hex run id>-p<process>-<seq>, also inside a
	// broker's topic name (tg.flow.<name>, persistent://tg/flow/<name>) or a contract string.
	reUniqueName = regexp.MustCompile(`[A-Za-z0-9_.:/-]*\b[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{6}-p\d+-\d+\b[A-Za-z0-9_.-]*`)
	reUUID       = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	rePointer    = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	reAddr       = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\blocalhost:\d+\b|\[::1?\](?::\d+)?`)
	rePath       = regexp.MustCompile(`(?:/tmp|/var|/root)/[^\s'",)]+`)
	reDuration   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:h\d+(?:\.\d+)?)?(?:m\d+(?:\.\d+)?)?(?:ns|µs|us|ms|s|m|h)\b`)
	reDoubleQ    = regexp.MustCompile(`"(?:[^"\\]|\\.){0,200}"`)
	reSingleQ    = regexp.MustCompile(`'[^']{0,200}'`)
	reNumber     = regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)
	reSpaces     = regexp.MustCompile(`\s+`)
	reHang       = regexp.MustCompile(`(?i)did not return within|timed out|deadline exceeded|\btimeout\b|no answer within`)
	// a call at the start of an error: "producer.send('...')", "ensure_topic + create_consumer(",
	// "Consumer(flow:tg:x, s)", "create topic tg.flow.x:" (Go backends name the step in words).
	reCall      = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*(?: \+ [A-Za-z_][A-Za-z0-9_.]*)*)(?:\(|: )`)
	reCallParen = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\(`) // an assertion's "CreateTopic(...)"
)

// normalise replaces the run-specific tokens of s by placeholders: the same failure in two
// specs (or two runs) then reads the same.
func normalise(s string) string {
	s = ansiEscape.ReplaceAllString(s, "")
	s = reUniqueName.ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, ":./") {
			return "<topic>"
		}
		return "<name>"
	})
	s = reUUID.ReplaceAllString(s, "<uuid>")
	s = rePointer.ReplaceAllString(s, "0x…")
	s = reAddr.ReplaceAllString(s, "<addr>")
	s = rePath.ReplaceAllString(s, "<path>")
	s = reDuration.ReplaceAllString(s, "<d>")
	s = reDoubleQ.ReplaceAllString(s, `"…"`)
	s = reSingleQ.ReplaceAllString(s, `'…'`)
	s = reNumber.ReplaceAllString(s, "N")
	return strings.TrimSpace(reSpaces.ReplaceAllString(s, " "))
}

// CauseOf reduces one failure (the whole failure text: Case.Detail, else Case.Message) to its
// cause, from the most specific clue the text has:
//
//  1. what the wrapped client logged while the call failed ("...; meanwhile TrustGraph's client
//     logged: <line>", the adapters' transcript), anywhere in the failure or its history;
//  2. a Gomega "Unexpected error:": the error after the failing call's name;
//  3. else the assertion in one line, as its cell shows it (readGomega's Line: the same
//     reading of the message as cause's).
//
// This is how a foreign report (or one of ours written before failure records) is read: a
// failure of our own runs carries its record (evidence.Failure: the call whose error the
// failure quotes, what the history owed it), and causeOfRecord groups by that instead.
//
// The clue is then normalised (normalise) and, when it matches a known family of one root
// cause (causeFamilies: a topic that was never created, TopicExists that says yes), named
// after the family, so different symptoms of that cause group together.
func CauseOf(failure string) Cause {
	text := ansiEscape.ReplaceAllString(failure, "")
	msg, _, _ := strings.Cut(text, "history of contract calls:")
	if i := strings.Index(msg, "\n\nat "); i >= 0 { // the failure's location and what follows
		msg = msg[:i]
	}
	g := readGomega(msg)
	lines := g.Lines
	if len(lines) == 0 {
		return Cause{Key: "assertion: (no message)", Kind: "assertion", Clue: "(no message)"}
	}
	var desc, errText string
	if g.Shape == gomegaError {
		desc, errText = g.Desc, g.Actual
	}
	c := Cause{Kind: "assertion"}
	callOf := func(s string) string {
		if m := reCall.FindStringSubmatch(s); m != nil {
			return m[1]
		}
		return ""
	}
	switch logged := loggedClue(msg); {
	case logged != "":
		c.Clue = logged
		c.Kind = "error"
		// the line that carries the clue names the call and says whether it hung
		for _, l := range strings.Split(msg, "\n") {
			if strings.Contains(l, "logged: ") {
				l = strings.TrimLeft(strings.TrimSpace(l), `"`)
				if reHang.MatchString(l) {
					c.Kind = "hang"
				}
				if i := strings.Index(l, ": "); i >= 0 && c.Call == "" {
					c.Call = callOf(strings.TrimSpace(l[i+2:]))
				}
				if c.Call == "" {
					c.Call = callOf(l)
				}
				break
			}
		}
	case errText != "":
		c.Kind = "error"
		if reHang.MatchString(errText) || reHang.MatchString(desc) {
			c.Kind = "hang"
		}
		c.Call = callOf(errText)
		if c.Call == "" {
			c.Call = callOf(desc)
		}
		clue := errText
		if c.Call != "" && strings.HasPrefix(clue, c.Call+"(") {
			// "call(args): rest" -> "rest": the call is in Call; the finding lists the calls.
			if j := strings.Index(clue, "): "); j >= 0 {
				clue = clue[j+3:]
			}
		}
		c.Clue = clue
	default:
		// The message in one line, as its cell shows it (cause): Gomega's "Timed out after
		// 10s." says only that, the description follows; "Expected" alone says nothing, the
		// values and the matcher do.
		c.Clue = g.Line()
		if reHang.MatchString(c.Clue) {
			c.Kind = "hang"
		}
		if m := reCallParen.FindStringSubmatch(lines[0]); m != nil {
			c.Call = m[1]
		}
	}
	// Direct: the cell's line (cause: the message in one line) shows the clue. An error's
	// clue is in it (after its description); a logged one only when its line is the cell's.
	raw := strings.TrimSuffix(truncate(c.Clue, 60), "…")
	c.Direct = strings.Contains(truncate(g.Line(), causeLen), raw)
	if c.inFamily() {
		return c
	}
	// The calls are listed per finding: the same error of two calls is one cause.
	c.Key = c.Kind + ": " + c.Clue
	return c
}

// inFamily normalises c's clue and, when it is a symptom of one of causeFamilies, names the
// family in it and keys c by the family alone; it reports whether it did.
func (c *Cause) inFamily() bool {
	c.Clue = truncate(normalise(c.Clue), 200)
	for _, f := range causeFamilies {
		if f.match.MatchString(c.Clue) {
			c.Clue = f.name + " (" + c.Clue + ")"
			c.Key = f.name
			return true
		}
	}
	return false
}

// causeFamilies name clues that are symptoms of one root cause, so they group into one
// finding whatever call or spec showed them. The place to teach the grouping a new one.
var causeFamilies = []struct {
	name  string
	match *regexp.Regexp
}{
	{"topic missing on the broker (clients wait for its metadata)",
		regexp.MustCompile(`(?i)not found in cluster metadata|UnknownTopicOrPartition|unknown topic or partition|_wait_on_metadata|topic <topic> does not exist|TopicNotFound|Topic not found`)},
	{"TopicExists is true for a topic never created",
		regexp.MustCompile(`(?i)fresh topic.* must not exist|must create nothing, but \S+ exists`)},
	{"TopicExists is false for a topic that was created",
		regexp.MustCompile(`(?i)must exist after (CreateTopic|EnsureTopic)|EnsureTopic must create a missing topic|created topic must exist|\(\) returned but <topic> does not exist`)},
}

// loggedClue is the first "logged: <line>" clause of a failure (what a wrapped client logged
// while its call failed), up to the end of its line or quote; "" when there is none.
func loggedClue(s string) string {
	i := strings.Index(s, "logged: ")
	if i < 0 {
		return ""
	}
	rest := s[i+len("logged: "):]
	if j := strings.IndexAny(rest, "\n\""); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// Findings groups column col's failed behaviours by the cause of each one's first failure.
// Findings come most specs first (a tie: the one whose first spec comes first in the
// catalogue), numbered from 1; IDs and Calls within a finding in catalogue order.
func (m *Matrix) Findings(col int) []Finding {
	byKey := map[string]*Finding{}
	calls := map[string]map[string]int{}
	var order []string
	for _, r := range m.Rows {
		if col >= len(r.Cells) {
			continue
		}
		c := r.Cells[col]
		if c.Status != Fail {
			continue
		}
		cause := cellCause(c)
		f := byKey[cause.Key]
		if f == nil {
			// Rows come in catalogue order (Build sorts them), so the first row of a key is the
			// spec that shows it first, unless a later one shows it in its own failure line.
			f = &Finding{Key: cause.Key, Cause: cause, First: r.Key, Message: c.Message}
			byKey[cause.Key] = f
			calls[cause.Key] = map[string]int{}
			order = append(order, cause.Key)
		} else if cause.Direct && !f.Cause.Direct {
			f.Cause, f.First, f.Message = cause, r.Key, c.Message
		}
		f.IDs = append(f.IDs, r.Key)
		f.Must = f.Must || r.Must()
		if cause.Call != "" {
			calls[cause.Key][cause.Call]++
		}
	}
	out := make([]Finding, 0, len(order))
	for _, k := range order {
		f := byKey[k]
		for call, n := range calls[k] {
			if n > 1 {
				call += fmt.Sprintf(" x%d", n)
			}
			f.Calls = append(f.Calls, call)
		}
		sort.Strings(f.Calls)
		out = append(out, *f)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].IDs) > len(out[j].IDs) })
	for i := range out {
		out[i].N = i + 1
	}
	return out
}

// cellCause is the cause of a failed cell: that of its first failed entry, from its failure
// record when it has one (our own runs: causeOfRecord; a failure of ours without one is an
// assertion), else - a foreign report - from its text (CauseOf).
func cellCause(c *Cell) Cause {
	for _, e := range c.Entries {
		if e.Status != Fail {
			continue
		}
		if e.Failure != nil {
			return causeOfRecord(*e.Failure, e.Message)
		}
		if e.Backend != "" {
			// Our own run (it carries a result) without a record: the spec failed before it
			// opened a client, so no call is behind it. Its one-line cause is the clue.
			return causeOfRecord(evidence.Failure{Kind: evidence.KindAssertion}, e.Message)
		}
		text := e.Detail
		if text == "" {
			text = e.Message
		}
		return CauseOf(text)
	}
	return CauseOf(c.Message)
}

// FindingNumbers maps each failed row key of a column to the number of its finding, for the
// findings that block more than one spec (a cause of one failure alone needs no number: its
// own line names it).
func FindingNumbers(fs []Finding) map[string]int {
	out := map[string]int{}
	for _, f := range fs {
		if len(f.IDs) > 1 {
			for _, id := range f.IDs {
				out[id] = f.N
			}
		}
	}
	return out
}

// Summary is the finding in one line: its number, how many specs it blocks and which shows
// it first, and the cause.
func (f Finding) Summary() string {
	s := fmt.Sprintf("#%d (%s, first %s", f.N, plural(len(f.IDs), "spec"), f.First)
	if !f.Must {
		s += ", SHOULD only"
	}
	return s + "): " + f.Cause.Kind + ": " + f.Cause.Clue
}

// CallList names the failing calls seen, with how often: "ensure_topic + create_consumer x28,
// producer.send x7"; "" when no failure named its call.
func (f Finding) CallList() string { return strings.Join(f.Calls, ", ") }

// SpecList is the finding's specs, all of them when few, else the first ones and how many more.
func (f Finding) SpecList(max int) string {
	if len(f.IDs) <= max {
		return strings.Join(f.IDs, " ")
	}
	return strings.Join(f.IDs[:max], " ") + fmt.Sprintf(" and %d more", len(f.IDs)-max)
}
