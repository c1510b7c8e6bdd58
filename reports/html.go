package reports

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// HTML writes a self-contained page (inline CSS, no scripts, no network assets): per backend
// the provider, broker version, startup and suite time; the matrix with each failing cell's
// cause and each skipped cell's reason visible in the cell, durations, and the per-entry detail
// of table specs in a <details> element.
func HTML(w io.Writer, m *Matrix, o Options) error {
	type cellView struct {
		Status   string
		Word     string
		Duration string
		Should   bool // a failed SHOULD: shown apart from a failed MUST
		Failed   bool // the summary is a cause
		Summary  string
		Detail   string
		Baseline string
		Finding  int // the number of the finding (one cause, several specs) it belongs to; 0 none
		Entries  []Case
	}
	type findingView struct {
		Backend     string
		N, Specs    int
		Level       string
		IDs, First  string
		Kind, Cause string
		Calls       string
	}
	type rowView struct {
		Key, ID, Title string
		Level          string
		Labels         []string
		Cells          []cellView
	}
	type backendView struct {
		Label, Provider, Broker, Startup, Suite, Counts string
		Verdict                                         string
		Description, ProviderWhy                        string
		Reference                                       bool
		Settings                                        []string
		Files                                           []string
		Setup                                           []Case
	}
	var data struct {
		Backends    []backendView
		Rows        []rowView
		Baseline    bool
		Performance template.HTML
		Interrupted string
		Findings    []findingView
	}
	data.Baseline = o.Baseline != nil
	data.Performance = PerformanceHTML(o.Bench)
	data.Interrupted = m.InterruptedNote()
	for bi, b := range m.Backends {
		data.Backends = append(data.Backends, backendView{
			Label: b.Label, Provider: b.provider(), Broker: b.brokerVersion(), Startup: b.Meta.StartupList(),
			Suite: fmtSeconds(b.SuiteSeconds), Counts: b.countsText(), Reference: b.Reference(), Verdict: m.Verdict(bi).String(),
			Settings: b.Meta.SettingsList(), Files: b.Files, Setup: b.Setup,
		})
		if b.Meta != nil {
			data.Backends[len(data.Backends)-1].Description = b.Meta.Description
			data.Backends[len(data.Backends)-1].ProviderWhy = b.Meta.ProviderWhy
		}
	}
	numbers := make([]map[string]int, len(m.Backends))
	for i, b := range m.Backends {
		fs := m.Findings(i)
		numbers[i] = FindingNumbers(fs)
		for _, f := range fs {
			level := "MUST"
			if !f.Must {
				level = "SHOULD"
			}
			data.Findings = append(data.Findings, findingView{Backend: b.Label, N: f.N, Specs: len(f.IDs), Level: level,
				IDs: strings.Join(f.IDs, " "), First: f.First, Kind: f.Cause.Kind, Cause: f.Cause.Clue, Calls: f.CallList()})
		}
	}
	for _, r := range m.Rows {
		rv := rowView{Key: r.Key, ID: r.ID, Title: r.Title, Labels: r.Labels, Level: string(r.Level)}
		if r.ID == "" {
			rv.Title = r.Key
		}
		for i, c := range r.Cells {
			v := ViewCell(c, r, numbers[i][r.Key])
			cv := cellView{Status: string(v.Status), Word: v.HTMLWord(), Duration: v.Duration, Should: v.Should(),
				Summary: v.Summary, Finding: v.Finding, Failed: v.Failed()}
			if v.Failed() {
				for _, e := range c.Entries {
					if e.Status == Fail && e.Detail != "" && e.Detail != e.Message {
						cv.Detail = e.Detail
						break
					}
				}
			}
			if a, ok := o.differs(m.Backends[i].Label, r.Key, c); ok {
				cv.Baseline = string(a)
			}
			if len(c.Entries) > 1 {
				cv.Entries = c.Entries
			}
			rv.Cells = append(rv.Cells, cv)
		}
		data.Rows = append(data.Rows, rv)
	}
	if err := pageTemplate.Execute(w, data); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	return nil
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"dur":   fmtDuration,
	"lower": func(s Status) string { return string(s) },
	"join":  strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance: behaviour x backend</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.5em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #c8c8c8; padding: .35em .5em; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
th.reference, td.reference { background-image: repeating-linear-gradient(45deg, transparent 0 6px, rgba(0,0,0,.04) 6px 12px); }
.refnote { display: block; font-weight: normal; font-size: .8em; color: #6a4a00; }
td.id { font-family: ui-monospace, monospace; font-weight: bold; white-space: nowrap; }
.labels { display: block; color: #666; font-size: .8em; }
td.cell { min-width: 9em; max-width: 28em; }
td.pass { background-color: #e3f6e5; }
td.fail { background-color: #fde2e1; }
td.skip { background-color: #fff5d6; }
td.not-run { background-color: #eeeeee; color: #555; }
td.unknown { background-color: #e0eefa; }
.unknown .word { color: #14507a; }
td.fail.should { background-color: #fdebd3; }
.fail.should .word { color: #8a4b00; }
td.level { font-size: .8em; white-space: nowrap; }
.word { font-weight: bold; }
.fail .word { color: #a40e0e; } .pass .word { color: #176b25; } .skip .word { color: #7a5a00; }
.dur { color: #555; font-size: .85em; margin-left: .3em; }
.cause, .reason { display: block; margin-top: .2em; word-break: break-word; }
.finding { font-size: .8em; background: #a40e0e; color: #fff; border-radius: .6em; padding: 0 .4em; margin-left: .3em; white-space: nowrap; }
.baseline { display: block; font-size: .8em; color: #5b2a86; }
details { margin-top: .3em; font-size: .85em; }
pre { white-space: pre-wrap; word-break: break-word; margin: .3em 0; }
ul.entries { margin: .2em 0; padding-left: 1.2em; }
.setup-fail { color: #a40e0e; font-weight: bold; }
h3 { font-size: 1em; margin-top: 1.2em; }
table.perf td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure.chart { margin: .5em 0 1em; }
</style>
</head>
<body>
<h1>Conformance: behaviour x backend</h1>
{{if .Interrupted}}<p class="interrupted setup-fail">{{.Interrupted}}</p>{{end}}
<h2>Backends</h2>
<table class="backends">
<thead><tr><th>Backend</th><th>Provider</th><th>Broker</th><th>Broker startup</th><th>Suite time</th><th>Results</th><th>Verdict</th><th>Settings</th></tr></thead>
<tbody>
{{range .Backends}}<tr data-backend="{{.Label}}">
<td{{if .Reference}} class="reference"{{end}}><b>{{.Label}}</b>{{if .Reference}}<span class="refnote">reference backend - not a conformance result</span>{{end}}{{if .Description}}<span class="labels">{{.Description}}</span>{{end}}</td>
<td>{{.Provider}}{{if .ProviderWhy}}<span class="labels">{{.ProviderWhy}}</span>{{end}}</td><td>{{.Broker}}</td><td>{{.Startup}}</td><td>{{.Suite}}</td><td>{{.Counts}}
{{range .Setup}}{{if eq (lower .Status) "fail"}}<span class="setup-fail">{{.SetupName}} failed: {{.Message}}</span>{{end}}{{end}}</td>
<td class="verdict">{{.Verdict}}</td>
<td>{{range .Settings}}<code>{{.}}</code><br>{{end}}</td>
</tr>
{{end}}</tbody>
</table>
<h2>Behaviours</h2>
<table class="matrix" id="matrix">
<p>A failed MUST (FAIL) breaks TrustGraph's contract; a failed SHOULD (SHOULD FAIL) is a finding beyond it; UNKNOWN: the spec passed but its checkers could not vouch for the run (its history overflowed), not a pass.</p>
<thead><tr><th>ID</th><th>Level</th><th>Behaviour</th>{{range .Backends}}<th{{if .Reference}} class="reference"{{end}}>{{.Label}}{{if .Reference}}<span class="refnote">reference, not a conformance result</span>{{end}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr class="spec" data-id="{{.Key}}">
<td class="id">{{.ID}}</td>
<td class="level">{{.Level}}</td>
<td class="title">{{.Title}}{{if .Labels}}<span class="labels">{{join .Labels ", "}}</span>{{end}}</td>
{{range .Cells}}<td class="cell {{.Status}}{{if .Should}} should{{end}}" data-status="{{.Status}}"{{if .Should}} data-level="SHOULD"{{end}}><span class="word">{{.Word}}</span>{{if .Duration}} <span class="dur">{{.Duration}}</span>{{end}}{{if .Finding}} <span class="finding">finding #{{.Finding}}</span>{{end}}
{{if .Failed}}<span class="cause">{{.Summary}}</span>{{else if .Summary}}<span class="reason">{{.Summary}}</span>{{end}}
{{if .Baseline}}<span class="baseline">baseline: {{.Baseline}}</span>{{end}}
{{if .Detail}}<details><summary>full failure message</summary><pre>{{.Detail}}</pre></details>{{end}}
{{if .Entries}}<details><summary>{{len .Entries}} entries</summary><ul class="entries">{{range .Entries}}<li>{{.Status}} {{dur .Duration}} - {{.Text}}{{if .Message}}: {{.Message}}{{end}}</li>{{end}}</ul></details>{{end}}
</td>{{end}}
</tr>
{{end}}</tbody>
</table>
{{if .Findings}}<h2>Findings: failures that share a cause</h2>
<p>Each finding is one cause behind failures of one backend (the failure text with topic names, ids and durations normalised, the failing call, what the client logged); the matrix cells carry its number.</p>
<table class="findings">
<thead><tr><th>Backend</th><th>#</th><th>Level</th><th>Specs</th><th>First</th><th>Cause</th><th>Failing calls</th></tr></thead>
<tbody>
{{range .Findings}}<tr data-backend="{{.Backend}}" data-finding="{{.N}}"><td>{{.Backend}}</td><td>{{.N}}</td><td>{{.Level}}</td><td>{{.Specs}}: {{.IDs}}</td><td>{{.First}}</td><td>{{.Kind}}: {{.Cause}}</td><td>{{.Calls}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Baseline}}<p>Cells that differ from the accepted baseline say so ("baseline: pass").</p>{{end}}
{{.Performance}}
</body>
</html>
`))
