package reports

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The Performance section of compare.md and compare.html: the bench results (bench-*.json)
// beside the matrix. Tables of confirmed-send throughput, fixed-rate end-to-end latency and
// subscribe-to-live time per backend, the raw client's figures on the same broker and the
// ratio backend/raw; in HTML an inline SVG chart of the latency percentiles.

const perfCaveat = "Taken on the machine named below; when it is shared (as the harness's own CI machine is), " +
	"absolute numbers are inflated and noisy: the ratio backend/raw, measured on the same broker in the same run, is the robust figure."

func fmtMs(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.3f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

func fmtRatio(r float64) string {
	if r <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

func machineText(bs []*Bench) string {
	seen := map[string]bool{}
	var parts []string
	for _, b := range bs {
		m := b.Machine
		s := fmt.Sprintf("%d cores %s/%s", m.CPUs, m.GOOS, m.GOARCH)
		if m.Load1 > 0 {
			s += fmt.Sprintf(", load %.1f at start", m.Load1)
		}
		if m.Note != "" {
			s += " (" + m.Note + ")"
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, b.Backend+": "+s)
		}
	}
	return strings.Join(parts, "; ")
}

type perfRow struct {
	Backend, Client, Info string
	Cells                 []string
	Ratio                 string
	Smoke                 bool
}

// perfTables builds the three tables as rows of strings, shared by Markdown and HTML.
func perfTables(bs []*Bench) (thr, lat, sub, con []perfRow) {
	for _, b := range bs {
		for _, t := range b.Throughput {
			r := perfRow{Backend: b.Backend, Client: t.Client, Info: t.ClientInfo, Smoke: b.Smoke,
				Cells: []string{fmt.Sprint(t.Senders), fmt.Sprintf("%d x %d B", t.Messages, t.Bytes),
					fmt.Sprintf("%.0f", t.MsgsPerSec), fmt.Sprintf("%.2f", t.MBPerSec), fmt.Sprint(t.Errors)}}
			if t.Client == ClientBackend {
				r.Ratio = fmtRatio(b.RatioOf(fmt.Sprintf("throughput senders=%d", t.Senders)))
				if a := b.RatioOf(fmt.Sprintf("adapter throughput senders=%d", t.Senders)); a > 0 {
					r.Ratio += " (" + fmtRatio(a) + " vs raw-same-settings)"
				}
			}
			thr = append(thr, r)
		}
		for _, l := range b.Latency {
			r := perfRow{Backend: b.Backend, Client: l.Client, Info: l.ClientInfo, Smoke: b.Smoke,
				Cells: []string{fmt.Sprintf("%d/s for %.0fs", l.Rate, l.Seconds), fmt.Sprintf("%d/%d (%d acked)", l.Received, l.Sent, l.Acked),
					fmtMs(l.EndToEnd.P50), fmtMs(l.EndToEnd.P99), fmtMs(l.EndToEnd.P999), fmtMs(l.EndToEnd.Max),
					fmtMs(l.Send.P50), fmtMs(l.Send.P99), fmtMs(l.Ack.P99)}}
			if l.Client == ClientBackend {
				p50, p99 := b.RatioOf("latency p50"), b.RatioOf("latency p99")
				if p50 > 0 || p99 > 0 {
					r.Ratio = fmtRatio(p50) + " / " + fmtRatio(p99)
				}
			}
			lat = append(lat, r)
		}
		if s := b.Subscribe; s != nil {
			sub = append(sub, perfRow{Backend: b.Backend, Client: ClientBackend, Smoke: b.Smoke,
				Cells: []string{fmt.Sprint(s.N), fmtMs(s.P50), fmtMs(s.P99), fmtMs(s.Max)}})
		}
		for _, c := range b.Consume {
			r := perfRow{Backend: b.Backend, Client: c.Client, Info: c.ClientInfo, Smoke: b.Smoke,
				Cells: []string{fmt.Sprint(c.Consumers), fmt.Sprintf("%d x %d B", c.Messages, c.Bytes),
					fmt.Sprintf("%.0f", c.AcksPerSec), fmt.Sprintf("%.0f", c.TotalAcksPerSec), fmt.Sprint(c.Errors)}}
			if c.Client == ClientBackend {
				r.Ratio = fmtRatio(b.RatioOf(fmt.Sprintf("consume consumers=%d", c.Consumers)))
			}
			con = append(con, r)
		}
	}
	return thr, lat, sub, con
}

var (
	thrHead = []string{"Backend", "Client", "Senders", "Messages", "msgs/s", "MB/s", "Errors", "backend/raw"}
	latHead = []string{"Backend", "Client", "Offered", "Received/sent", "p50", "p99", "p99.9", "max", "send p50", "send p99", "ack lag p99", "backend/raw p50 / p99"}
	subHead = []string{"Backend", "Consumer() calls", "p50", "p99", "max"}
	conHead = []string{"Backend", "Client", "Consumers", "Messages each", "acks/s per consumer", "acks/s in all", "Errors", "backend/raw"}
)

const consumeTitle = "Receive and ack: each consumer on its own subscription acks every message inline"

// PerformanceMarkdown renders the Performance section ("" without results). chart, when not
// empty, is the path of the latency chart (SVG) relative to the Markdown file.
func PerformanceMarkdown(bs []*Bench, chart string) string {
	if len(bs) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n## Performance\n\n")
	sb.WriteString(perfCaveat + " Machine: " + mdEscape(machineText(bs)) + ".\n\n")
	for _, b := range bs {
		if b.Smoke {
			fmt.Fprintf(&sb, "**%s: smoke run (shortened workloads) - its numbers only show the bench code works.**\n\n", mdEscape(b.Backend))
		}
	}
	table := func(title string, head []string, rows []perfRow, withClient bool) {
		if len(rows) == 0 {
			return
		}
		sb.WriteString("### " + title + "\n\n| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
		for _, r := range rows {
			cells := []string{mdEscape(r.Backend)}
			if withClient {
				c := r.Client
				if r.Info != "" {
					c += " (" + r.Info + ")"
				}
				cells = append(cells, mdEscape(c))
			}
			for _, c := range r.Cells {
				cells = append(cells, mdEscape(c))
			}
			if withClient {
				cells = append(cells, r.Ratio)
			}
			sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		sb.WriteString("\n")
	}
	thr, lat, sub, con := perfTables(bs)
	table("Confirmed-send throughput", thrHead, thr, true)
	table("End-to-end latency at a fixed rate (from the intended send time)", latHead, lat, true)
	table(consumeTitle, conHead, con, true)
	table("Subscribe-to-live: Consumer() until it returns", subHead, sub, false)
	if chart != "" {
		sb.WriteString("![latency percentiles per backend](" + chart + ")\n")
	}
	var errs []string
	for _, b := range bs {
		for _, e := range b.Errors {
			errs = append(errs, "- **"+mdEscape(b.Backend)+"**: "+mdEscape(e))
		}
	}
	if len(errs) > 0 {
		sb.WriteString("\n### Bench errors\n\n" + strings.Join(errs, "\n") + "\n")
	}
	return sb.String()
}

// PerformanceHTML renders the Performance section for compare.html ("" without results).
func PerformanceHTML(bs []*Bench) template.HTML {
	if len(bs) == 0 {
		return ""
	}
	e := html.EscapeString
	var sb strings.Builder
	sb.WriteString(`<section id="performance"><h2>Performance</h2>` + "\n<p>" + e(perfCaveat) + " Machine: " + e(machineText(bs)) + ".</p>\n")
	for _, b := range bs {
		if b.Smoke {
			sb.WriteString(`<p class="setup-fail">` + e(b.Backend) + ": smoke run (shortened workloads) - its numbers only show the bench code works.</p>\n")
		}
	}
	table := func(id, title string, head []string, rows []perfRow, withClient bool) {
		if len(rows) == 0 {
			return
		}
		sb.WriteString("<h3>" + e(title) + `</h3><table class="perf" id="` + id + `"><thead><tr>`)
		for _, h := range head {
			sb.WriteString("<th>" + e(h) + "</th>")
		}
		sb.WriteString("</tr></thead><tbody>\n")
		for _, r := range rows {
			sb.WriteString(`<tr class="perf-row" data-backend="` + e(r.Backend) + `" data-client="` + e(r.Client) + `"><td><b>` + e(r.Backend) + "</b></td>")
			if withClient {
				sb.WriteString("<td>" + e(r.Client))
				if r.Info != "" {
					sb.WriteString(`<span class="labels">` + e(r.Info) + "</span>")
				}
				sb.WriteString("</td>")
			}
			for _, c := range r.Cells {
				sb.WriteString(`<td class="num">` + e(c) + "</td>")
			}
			if withClient {
				sb.WriteString(`<td class="num ratio">` + e(r.Ratio) + "</td>")
			}
			sb.WriteString("</tr>\n")
		}
		sb.WriteString("</tbody></table>\n")
	}
	thr, lat, sub, con := perfTables(bs)
	table("perf-throughput", "Confirmed-send throughput", thrHead, thr, true)
	table("perf-latency", "End-to-end latency at a fixed rate (from the intended send time)", latHead, lat, true)
	table("perf-consume", consumeTitle, conHead, con, true)
	if svg := LatencySVG(bs); svg != "" {
		sb.WriteString(`<figure class="chart">` + svg + "<figcaption>End-to-end latency percentiles, log scale (corrected for coordinated omission).</figcaption></figure>\n")
	}
	table("perf-subscribe", "Subscribe-to-live: Consumer() until it returns", subHead, sub, false)
	for _, b := range bs {
		for _, msg := range b.Errors {
			sb.WriteString(`<p class="setup-fail">` + e(b.Backend) + " bench error: " + e(msg) + "</p>\n")
		}
	}
	sb.WriteString("</section>\n")
	return template.HTML(sb.String())
}

// LatencySVG is a self-contained SVG bar chart of end-to-end latency percentiles: one group
// per percentile, one bar per backend and client, on a log scale. "" without latency figures.
func LatencySVG(bs []*Bench) string {
	type series struct {
		label string
		p     Percentiles
	}
	var ss []series
	for _, b := range bs {
		for _, c := range []string{ClientBackend, ClientRaw} {
			if l := b.LatencyOf(c); l != nil && l.EndToEnd.N > 0 {
				label := b.Backend
				if c == ClientRaw {
					label += " (raw client)"
				}
				ss = append(ss, series{label, l.EndToEnd})
			}
		}
	}
	if len(ss) == 0 {
		return ""
	}
	pcts := []struct {
		name string
		get  func(Percentiles) float64
	}{
		{"p50", func(p Percentiles) float64 { return p.P50 }},
		{"p90", func(p Percentiles) float64 { return p.P90 }},
		{"p99", func(p Percentiles) float64 { return p.P99 }},
		{"p99.9", func(p Percentiles) float64 { return p.P999 }},
		{"max", func(p Percentiles) float64 { return p.Max }},
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, pc := range pcts {
			if v := pc.get(s.p); v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return ""
	}
	minExp, maxExp := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if maxExp <= minExp {
		maxExp = minExp + 1
	}
	const (
		left, right, top, bottom = 70.0, 20.0, 20.0, 40.0
		plotH                    = 240.0
		barW, gap                = 16.0, 28.0
	)
	groupW := float64(len(ss))*barW + gap
	plotW := groupW * float64(len(pcts))
	legendH := 18.0 * float64(len(ss))
	width, height := left+plotW+right, top+plotH+bottom+legendH
	y := func(v float64) float64 {
		if v <= 0 {
			return top + plotH
		}
		f := (math.Log10(v) - minExp) / (maxExp - minExp)
		return top + plotH - f*plotH
	}
	colours := []string{"#1f5fa8", "#8fb8e6", "#b3561d", "#f0b27a", "#2e7d32", "#a5d6a7", "#6a1b9a", "#ce93d8"}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="latency-chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="end-to-end latency percentiles per backend">`,
		width, height, width, height)
	sb.WriteString(`<style>text{font:11px system-ui,sans-serif;fill:#333}.grid{stroke:#ddd}.axis{stroke:#888}</style>`)
	for e := minExp; e <= maxExp; e++ {
		yy := y(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line class="grid" x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f"/>`, left, left+plotW, yy, yy)
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-6, yy+4, strconv.FormatFloat(math.Pow(10, e), 'g', -1, 64)+" ms")
	}
	fmt.Fprintf(&sb, `<line class="axis" x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f"/>`, left, left, top, top+plotH)
	for gi, pc := range pcts {
		gx := left + float64(gi)*groupW + gap/2
		for si, s := range ss {
			v := pc.get(s.p)
			x, yy := gx+float64(si)*barW, y(v)
			fmt.Fprintf(&sb, `<rect class="bar" data-series="%s" data-pct="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				html.EscapeString(s.label), pc.name, x, yy, barW-2, top+plotH-yy, colours[si%len(colours)],
				html.EscapeString(s.label), pc.name, html.EscapeString(fmtMs(v)))
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`, gx+float64(len(ss))*barW/2, top+plotH+16, pc.name)
	}
	for si, s := range ss {
		ly := top + plotH + bottom + 18*float64(si)
		fmt.Fprintf(&sb, `<rect class="legend" x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`,
			left, ly-10, colours[si%len(colours)], left+18, ly, html.EscapeString(s.label))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// WritePerformancePage writes the Performance section of bs on its own, for a bench run
// without conformance results: dir/bench.md (with the chart dir/bench-latency.svg) and a
// self-contained dir/bench.html. Returns the paths written.
func WritePerformancePage(dir string, bs []*Bench) ([]string, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	write := func(name, content string) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	chart := ""
	if svg := LatencySVG(bs); svg != "" {
		chart = "bench-latency.svg"
		if err := write(chart, svg); err != nil {
			return written, err
		}
	}
	if err := write("bench.md", "# Bench"+PerformanceMarkdown(bs, chart)); err != nil {
		return written, err
	}
	page := "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Bench</title>\n<style>" +
		"body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0 1.5em}" +
		"th,td{border:1px solid #ccc;padding:.25em .5em}td.num{text-align:right}.labels{display:block;color:#666;font-size:.85em}" +
		".setup-fail{color:#a00}</style></head><body>\n" + string(PerformanceHTML(bs)) + "</body></html>\n"
	if err := write("bench.html", page); err != nil {
		return written, err
	}
	return written, nil
}
