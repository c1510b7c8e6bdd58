package reports

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func benchFixture() []*Bench {
	lat := func(client string, p50, p99, max float64) Latency {
		return Latency{Client: client, Rate: 1000, Seconds: 20, Bytes: 1024, Sent: 20000, Received: 20000, Acked: 20000,
			EndToEnd: Percentiles{P50: p50, P90: p50 * 2, P99: p99, P999: p99 * 1.5, Max: max, N: 20000},
			Send:     Percentiles{P50: p50 / 2, P99: p99 / 2, N: 20000}, Ack: Percentiles{P99: 3, N: 20000}}
	}
	thr := func(client string, senders int, rate float64) Throughput {
		return Throughput{Client: client, Senders: senders, Messages: 50000, Bytes: 1024, MsgsPerSec: rate, MBPerSec: rate * 1024 / 1e6, Seconds: 50000 / rate}
	}
	k := &Bench{Backend: "kafka", Broker: "kafka", Machine: Machine{CPUs: 2, GOOS: "linux", GOARCH: "amd64", Load1: 7.5},
		Throughput: []Throughput{thr(ClientBackend, 1, 250), thr(ClientRaw, 1, 200), thr(ClientBackend, 8, 1600), thr(ClientRaw, 8, 2000)},
		Latency:    []Latency{lat(ClientBackend, 7.5, 140, 160), lat(ClientRaw, 8.4, 68, 83)},
		Subscribe:  &Subscribe{N: 20, P50: 78, P99: 250, Max: 250},
		Consume: []Consume{{Client: ClientBackend, Consumers: 1, Messages: 20000, Bytes: 1024, AcksPerSec: 30000, TotalAcksPerSec: 30000, Acked: 20000},
			{Client: ClientRaw, Consumers: 1, Messages: 20000, Bytes: 1024, AcksPerSec: 40000, TotalAcksPerSec: 40000, Acked: 20000}}}
	p := &Bench{Backend: "pulsar", Broker: "pulsar", Machine: k.Machine,
		Throughput: []Throughput{thr(ClientBackend, 1, 290), thr(ClientRaw, 1, 220)},
		Latency:    []Latency{lat(ClientBackend, 0.4, 12, 30), lat(ClientRaw, 0.35, 9, 20)},
		Errors:     []string{"raw throughput senders=8: gave up after 100 failed sends"}}
	k.ComputeRatios()
	p.ComputeRatios()
	return []*Bench{k, p}
}

func TestRatios(t *testing.T) {
	k := benchFixture()[0]
	for fig, want := range map[string]float64{"throughput senders=1": 1.25, "throughput senders=8": 0.8, "latency p99": 140.0 / 68, "consume consumers=1": 0.75} {
		if got := k.RatioOf(fig); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%s: ratio %v, want %v", fig, got, want)
		}
	}
	// A run with errors has no throughput ratio: a half-finished run is no figure.
	b := &Bench{Throughput: []Throughput{{Client: ClientBackend, Senders: 1, MsgsPerSec: 10, Errors: 3}, {Client: ClientRaw, Senders: 1, MsgsPerSec: 10}}}
	b.ComputeRatios()
	if len(b.Ratios) != 0 {
		t.Errorf("ratio from a failed run: %+v", b.Ratios)
	}
}

func TestPerformanceMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, fixtureMatrix(t), Options{Bench: benchFixture(), BenchChart: "bench-latency.svg"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, w := range []string{"## Performance", "2 cores linux/amd64, load 7.5", "| kafka | backend | 8 | 50000 x 1024 B | 1600 | 1.64 | 0 | 0.80x |",
		"| kafka | backend | 1000/s for 20s | 20000/20000 (20000 acked) | 7.5 ms | 140 ms |", "0.89x / 2.06x",
		"| kafka | 20 | 78.0 ms | 250 ms | 250 ms |", "![latency percentiles per backend](bench-latency.svg)", "gave up after 100 failed sends"} {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, md)
		}
	}
	var none bytes.Buffer
	if err := Markdown(&none, fixtureMatrix(t), Options{}); err != nil || strings.Contains(none.String(), "Performance") {
		t.Errorf("no bench results must mean no Performance section (%v)", err)
	}
	svg := LatencySVG(benchFixture())
	if n := strings.Count(svg, `<rect class="bar"`); n != 4*5 {
		t.Errorf("want 4 series x 5 percentiles = 20 bars, got %d", n)
	}
	if strings.Contains(svg, "http://") && strings.Count(svg, "http://") != 1 || strings.Contains(svg, "href") {
		t.Errorf("the chart must not reference external assets: %s", svg)
	}
}

// probePerf is appended to a copy of the page only: the report itself carries no script.
const probePerf = `<script>
var rows = [];
document.querySelectorAll("#performance tr.perf-row").forEach(function (tr) {
  rows.push({table: tr.closest("table").id, backend: tr.getAttribute("data-backend"), client: tr.getAttribute("data-client"),
    visible: tr.offsetHeight > 0, text: tr.innerText});
});
var bars = [];
document.querySelectorAll("#performance svg.latency-chart rect.bar").forEach(function (r) {
  var b = r.getBoundingClientRect();
  bars.push({series: r.getAttribute("data-series"), pct: r.getAttribute("data-pct"), h: b.height, w: b.width});
});
var svg = document.querySelector("#performance svg.latency-chart");
var sb = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
var out = document.createElement("pre");
out.id = "probe";
out.textContent = "PROBE" + JSON.stringify({rows: rows, bars: bars, chartW: sb.width, chartH: sb.height}) + "ENDPROBE";
document.body.appendChild(out);
</script>
</body>`

// TestPerformanceInBrowser: the Performance section renders in a real headless Chromium, like
// the matrix: every table row visible with its numbers, the inline SVG chart laid out with a
// bar per backend, client and percentile, taller bars for larger latencies.
func TestPerformanceInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	var page bytes.Buffer
	if err := HTML(&page, fixtureMatrix(t), Options{Bench: benchFixture()}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "<script") {
		t.Fatal("the report must carry no script")
	}
	probePath := filepath.Join(t.TempDir(), "probe.html")
	writeFile(t, probePath, strings.Replace(page.String(), "</body>", probePerf, 1))
	dom := runChromium(t, bin, "--dump-dom", "--window-size=1400,900", "file://"+probePath)
	mt := regexp.MustCompile(`(?s)<pre id="probe">PROBE(.*)ENDPROBE</pre>`).FindSubmatch(dom)
	if mt == nil {
		t.Fatalf("probe output missing from the rendered DOM:\n%s", tail(string(dom), 3000))
	}
	var got struct {
		Rows []struct {
			Table, Backend, Client, Text string
			Visible                      bool
		}
		Bars []struct {
			Series, Pct string
			H, W        float64
		}
		ChartW, ChartH float64
	}
	raw := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`).Replace(string(mt[1]))
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("probe JSON: %v\n%s", err, raw)
	}
	// kafka: 4 throughput + 2 latency + 2 receive-and-ack + 1 subscribe; pulsar: 2 + 2 + 0 + 0.
	if len(got.Rows) != 13 {
		t.Fatalf("browser shows %d performance rows, want 13: %+v", len(got.Rows), got.Rows)
	}
	find := func(table, backend, client string) string {
		for _, r := range got.Rows {
			if r.Table == table && r.Backend == backend && r.Client == client {
				if !r.Visible {
					t.Errorf("%s %s %s row not visible", table, backend, client)
				}
				return r.Text
			}
		}
		t.Errorf("no %s row for %s %s", table, backend, client)
		return ""
	}
	for _, c := range []struct {
		table, backend, client string
		want                   []string
	}{
		{"perf-throughput", "kafka", "backend", []string{"250", "1.25x"}}, // the first row: 1 sender
		{"perf-latency", "kafka", "backend", []string{"7.5 ms", "140 ms", "0.89x / 2.06x"}},
		{"perf-latency", "pulsar", "raw", []string{"0.350 ms", "9.0 ms"}},
		{"perf-subscribe", "kafka", "backend", []string{"78.0 ms", "250 ms"}},
	} {
		text := find(c.table, c.backend, c.client)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %s %s: visible text %q lacks %q", c.table, c.backend, c.client, text, w)
			}
		}
	}
	if got.ChartW < 300 || got.ChartH < 200 {
		t.Errorf("latency chart laid out at %.0fx%.0f px", got.ChartW, got.ChartH)
	}
	if len(got.Bars) != 20 {
		t.Fatalf("chart has %d bars, want 20 (kafka, kafka raw, pulsar, pulsar raw x p50..max)", len(got.Bars))
	}
	height := map[string]float64{}
	for _, b := range got.Bars {
		if b.W <= 0 || b.H <= 0 {
			t.Errorf("bar %s %s not drawn: %+v", b.Series, b.Pct, b)
		}
		height[b.Series+" "+b.Pct] = b.H
	}
	if !(height["kafka max"] > height["kafka p99"] && height["kafka p99"] > height["kafka p50"] && height["kafka p50"] > height["pulsar p50"]) {
		t.Errorf("bar heights do not follow the latencies: %v", height)
	}
}

func TestWritePerformancePage(t *testing.T) {
	dir := t.TempDir()
	paths, err := WritePerformancePage(dir, benchFixture())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatalf("wrote %v; want the chart, bench.md and bench.html", paths)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Receive and ack", "| kafka | backend | 1 | 20000 x 1024 B | 30000 | 30000 | 0 | 0.75x |", "](bench-latency.svg)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "bench.html"))
	if err != nil || !strings.Contains(string(page), `id="perf-consume"`) || !strings.Contains(string(page), "<svg") {
		t.Errorf("bench.html lacks the consume table or the chart (%v)", err)
	}
	if paths, err := WritePerformancePage(dir, nil); err != nil || paths != nil {
		t.Errorf("no benches: wrote %v, %v; want nothing", paths, err)
	}
}

// ComputeRatios compares only what both clients measured in full: no ratio from a client that
// measured nothing or stopped on errors, none where the other client has no run, and the
// senders are the backend's runs.
func TestRatiosNeedBothClientsWhole(t *testing.T) {
	thr := func(client string, senders int, rate float64, errs int) Throughput {
		return Throughput{Client: client, Senders: senders, MsgsPerSec: rate, Errors: errs}
	}
	for name, c := range map[string]struct {
		b    Bench
		want string
	}{
		"raw measured 0":            {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 10, 0), thr(ClientRaw, 1, 0, 0)}}, ""},
		"backend measured 0":        {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 0, 0), thr(ClientRaw, 1, 10, 0)}}, ""},
		"raw ran more senders":      {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 10, 0), thr(ClientRaw, 1, 5, 0), thr(ClientRaw, 8, 5, 0)}}, "throughput senders=1"},
		"same settings whole":       {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 10, 0), thr(ClientRawSame, 1, 5, 0)}}, "adapter throughput senders=1"},
		"same settings with errors": {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 10, 0), thr(ClientRawSame, 1, 5, 2)}}, ""},
		"backend errors, same":      {Bench{Throughput: []Throughput{thr(ClientBackend, 1, 10, 1), thr(ClientRawSame, 1, 5, 0)}}, ""},
		"latency of one client":     {Bench{Latency: []Latency{{Client: ClientBackend, EndToEnd: Percentiles{P50: 1, P99: 2, N: 5}}}}, ""},
		"consume of one client":     {Bench{Consume: []Consume{{Client: ClientBackend, Consumers: 1, AcksPerSec: 5}}}, ""},
		"consume, backend errors": {Bench{Consume: []Consume{{Client: ClientBackend, Consumers: 1, AcksPerSec: 5, Errors: 1},
			{Client: ClientRaw, Consumers: 1, AcksPerSec: 5}}}, ""},
		"consume, raw errors": {Bench{Consume: []Consume{{Client: ClientBackend, Consumers: 1, AcksPerSec: 5},
			{Client: ClientRaw, Consumers: 1, AcksPerSec: 5, Errors: 1}}}, ""},
		"consume, raw first": {Bench{Consume: []Consume{{Client: ClientRaw, Consumers: 1, AcksPerSec: 5},
			{Client: ClientBackend, Consumers: 1, AcksPerSec: 10}}}, "consume consumers=1"},
	} {
		c.b.ComputeRatios()
		var got []string
		for _, r := range c.b.Ratios {
			got = append(got, r.Figure)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: ratios %q, want %q", name, got, c.want)
		}
	}
}

// The tables say only what was measured: the machine's load and note when known, the latency
// ratios of the backend's row ("-" for the one not known), the client's description when there
// is one, no errors section without errors.
func TestPerformanceTablesSayWhatIsKnown(t *testing.T) {
	if fmtRatio(0) != "-" || fmtRatio(1.5) != "1.50x" {
		t.Errorf("fmtRatio: %q %q", fmtRatio(0), fmtRatio(1.5))
	}
	b := &Bench{Backend: "k", Machine: Machine{CPUs: 2, GOOS: "linux", GOARCH: "amd64", Note: "shared"}}
	if got := machineText([]*Bench{b}); got != "k: 2 cores linux/amd64 (shared)" {
		t.Errorf("machine %q", got)
	}
	lat := func(client, info string) Latency {
		return Latency{Client: client, ClientInfo: info, EndToEnd: Percentiles{P50: 1, P99: 2, N: 5}}
	}
	b.Latency = []Latency{lat(ClientBackend, ""), lat(ClientRaw, "librdkafka 2.11")}
	ratios := func(rs ...Ratio) []string {
		b.Ratios = rs
		_, rows, _, _ := perfTables([]*Bench{b})
		return []string{rows[0].Ratio, rows[1].Ratio}
	}
	for _, c := range []struct {
		rs   []Ratio
		want string
	}{
		{nil, "|"},
		{[]Ratio{{Figure: "latency p50", Ratio: 1.5}, {Figure: "latency p99", Ratio: 2}}, "1.50x / 2.00x|"},
		{[]Ratio{{Figure: "latency p99", Ratio: 2}}, "- / 2.00x|"},
		{[]Ratio{{Figure: "latency p50", Ratio: 1.5}}, "1.50x / -|"},
	} {
		if got := strings.Join(ratios(c.rs...), "|"); got != c.want {
			t.Errorf("ratios %v: rows %q, want %q", c.rs, got, c.want)
		}
	}
	md := PerformanceMarkdown([]*Bench{b}, "")
	if strings.Contains(md, "Bench errors") || strings.Contains(md, "load ") {
		t.Errorf("markdown:\n%s", md)
	}
	h := string(PerformanceHTML([]*Bench{b}))
	if strings.Count(h, `<span class="labels">`) != 1 || !strings.Contains(h, `raw<span class="labels">librdkafka 2.11</span>`) {
		t.Errorf("client descriptions in:\n%s", h)
	}
}

// svgAttrs reads the numeric attributes of the chart's elements of one kind, in order.
func svgAttrs(t *testing.T, svg, element, class string, names ...string) []map[string]float64 {
	t.Helper()
	re := regexp.MustCompile(`<` + element + ` class="` + class + `"[^>]*>`)
	var out []map[string]float64
	for _, tag := range re.FindAllString(svg, -1) {
		m := map[string]float64{}
		for _, n := range names {
			v := regexp.MustCompile(`\s` + n + `="([^"]+)"`).FindStringSubmatch(tag)
			if v == nil {
				t.Fatalf("%s without %s: %s", element, n, tag)
			}
			f, err := strconv.ParseFloat(v[1], 64)
			if err != nil {
				t.Fatalf("%s %s=%q: %v", element, n, v[1], err)
			}
			m[n] = f
		}
		out = append(out, m)
	}
	return out
}

// The latency chart is a log-scale bar chart a reader can trust: every bar stands on the axis
// and reaches the height of its value against the grid (one line per power of ten from below
// the smallest value to above the largest, labelled in ms), groups of bars per percentile left
// to right, the series in order within a group without overlapping, a label under each group,
// one legend entry per series in its colour, and all of it inside the picture.
func TestLatencyChartGeometry(t *testing.T) {
	mk := func(backend string, be, raw Percentiles) *Bench {
		return &Bench{Backend: backend, Latency: []Latency{{Client: ClientBackend, EndToEnd: be}, {Client: ClientRaw, EndToEnd: raw}}}
	}
	bs := []*Bench{
		mk("kafka", Percentiles{P50: 0.5, P90: 1, P99: 10, P999: 30, Max: 50, N: 9}, Percentiles{P50: 0.2, P90: 0.4, P99: 4, P999: 0, Max: 20, N: 9}),
		mk("pulsar", Percentiles{P50: 2, P90: 3, P99: 5, P999: 8, Max: 9, N: 9}, Percentiles{N: 0}), // the raw client measured nothing
	}
	svg := LatencySVG(bs)
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Fatalf("chart with NaN or Inf: %s", svg)
	}
	size := regexp.MustCompile(`<svg [^>]*width="([0-9.]+)" height="([0-9.]+)"`).FindStringSubmatch(svg)
	if size == nil {
		t.Fatalf("no size: %s", svg)
	}
	W, _ := strconv.ParseFloat(size[1], 64)
	H, _ := strconv.ParseFloat(size[2], 64)
	inside := func(what string, x, y float64) {
		if x < 0 || x > W || y < 0 || y > H {
			t.Errorf("%s at (%.1f, %.1f) is outside the %.0fx%.0f picture", what, x, y, W, H)
		}
	}
	axis := svgAttrs(t, svg, "line", "axis", "x1", "x2", "y1", "y2")
	if len(axis) != 1 || axis[0]["x1"] != axis[0]["x2"] || axis[0]["y1"] >= axis[0]["y2"] {
		t.Fatalf("axis %v", axis)
	}
	ax, top, base := axis[0]["x1"], axis[0]["y1"], axis[0]["y2"]
	inside("the axis", ax, top)
	inside("the axis", ax, base)

	// Grid: 0.1 ms to 100 ms, one line per power of ten, evenly spaced from the base up to the top.
	grid := svgAttrs(t, svg, "line", "grid", "x1", "x2", "y1", "y2")
	labels := regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="end">([^<]+)</text>`).FindAllStringSubmatch(svg, -1)
	wantLabels := []string{"0.1 ms", "1 ms", "10 ms", "100 ms"}
	if len(grid) != len(wantLabels) || len(labels) != len(wantLabels) {
		t.Fatalf("grid %v, labels %v", grid, labels)
	}
	step := (base - top) / float64(len(grid)-1)
	for i, g := range grid {
		if want := base - float64(i)*step; math.Abs(g["y1"]-want) > 0.11 || g["y1"] != g["y2"] || g["x1"] != ax || g["x2"] <= g["x1"] {
			t.Errorf("grid line %d: %v, want at y %.1f from the axis rightwards", i, g, want)
		}
		inside("a grid line", g["x2"], g["y1"])
		lx, _ := strconv.ParseFloat(labels[i][1], 64)
		ly, _ := strconv.ParseFloat(labels[i][2], 64)
		if labels[i][3] != wantLabels[i] || lx >= ax || ly <= g["y1"] || ly-g["y1"] > 5 {
			t.Errorf("grid label %d %q at (%.1f, %.1f): want %q left of the axis, on its line at %.1f", i, labels[i][3], lx, ly, wantLabels[i], g["y1"])
		}
		inside("a grid label", lx, ly)
	}
	height := func(v float64) float64 { // the height of v on the grid
		if v <= 0 {
			return 0
		}
		return (math.Log10(v) + 1) * step
	}

	// Bars: kafka, kafka (raw client), pulsar (no raw series: it measured nothing).
	series := []string{"kafka", "kafka (raw client)", "pulsar"}
	values := [][]float64{{0.5, 1, 10, 30, 50}, {0.2, 0.4, 4, 0, 20}, {2, 3, 5, 8, 9}}
	bars := svgAttrs(t, svg, "rect", "bar", "x", "y", "width", "height")
	names := regexp.MustCompile(`<rect class="bar" data-series="([^"]*)" data-pct="([^"]*)"`).FindAllStringSubmatch(svg, -1)
	if len(bars) != 5*len(series) {
		t.Fatalf("%d bars, want %d", len(bars), 5*len(series))
	}
	fills := map[string]string{}
	fill := regexp.MustCompile(`<rect class="bar" data-series="([^"]*)"[^>]* fill="([^"]+)"`)
	for _, m := range fill.FindAllStringSubmatch(svg, -1) {
		fills[m[1]] = m[2]
	}
	prevRight := ax
	for i, b := range bars {
		g, s := i/len(series), i%len(series)
		if names[i][1] != html.EscapeString(series[s]) || names[i][2] != []string{"p50", "p90", "p99", "p99.9", "max"}[g] {
			t.Errorf("bar %d is %v, want %s %d", i, names[i][1:], series[s], g)
		}
		if math.Abs(b["y"]+b["height"]-base) > 0.11 || b["height"] < 0 {
			t.Errorf("bar %d (%v) does not stand on the axis at %.1f", i, b, base)
		}
		if want := height(values[s][g]); math.Abs(b["height"]-want) > 0.2 {
			t.Errorf("bar %d (%s %g ms): height %.1f, want %.1f", i, series[s], values[s][g], b["height"], want)
		}
		if b["x"] < prevRight || b["width"] <= 0 {
			t.Errorf("bar %d (%v) overlaps the one before it (which ends at %.1f)", i, b, prevRight)
		}
		prevRight = b["x"] + b["width"]
		inside("a bar", b["x"], b["y"])
		inside("a bar", b["x"]+b["width"], b["y"]+b["height"])
	}
	groups := regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="middle">([^<]+)</text>`).FindAllStringSubmatch(svg, -1)
	if len(groups) != 5 {
		t.Fatalf("group labels %v", groups)
	}
	for g, m := range groups {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		first, last := bars[g*len(series)], bars[g*len(series)+len(series)-1]
		mid := (first["x"] + last["x"] + last["width"]) / 2
		if math.Abs(x-mid) > 1.5 || y <= base || y > base+20 {
			t.Errorf("label %q at (%.1f, %.1f), want under its bars, at x %.1f", m[3], x, y, mid)
		}
		inside("a group label", x, y)
	}
	legend := svgAttrs(t, svg, "rect", "legend", "x", "y", "width", "height")
	texts := regexp.MustCompile(`fill="([^"]+)"/><text x="([0-9.]+)" y="([0-9.]+)">([^<]+)</text>`).FindAllStringSubmatch(svg, -1)
	if len(legend) != len(series) || len(texts) != len(series) {
		t.Fatalf("legend %v %v", legend, texts)
	}
	for i, l := range legend {
		tx, _ := strconv.ParseFloat(texts[i][2], 64)
		ty, _ := strconv.ParseFloat(texts[i][3], 64)
		if texts[i][4] != html.EscapeString(series[i]) || texts[i][1] != fills[html.EscapeString(series[i])] {
			t.Errorf("legend %d: %q in %s, want %q in its bars' colour %s", i, texts[i][4], texts[i][1], series[i], fills[series[i]])
		}
		if l["y"] <= base+16 || (i > 0 && l["y"] <= legend[i-1]["y"]+l["height"]) || tx < l["x"]+l["width"] || ty < l["y"] || ty > l["y"]+l["height"]+2 {
			t.Errorf("legend %d: swatch %v, text at (%.1f, %.1f): want below the labels, one under the other, the text right of its swatch", i, l, tx, ty)
		}
		inside("a legend entry", tx, ty)
		inside("a legend swatch", l["x"], l["y"]+l["height"])
	}
	if W > prevRight+40 || H > legend[len(legend)-1]["y"]+40 {
		t.Errorf("picture %.0fx%.0f: more margin than the chart needs (bars end at %.1f, legend at %.1f)", W, H, prevRight, legend[len(legend)-1]["y"])
	}

	// One value: a power of ten alone still makes a decade of grid.
	one := LatencySVG([]*Bench{{Backend: "m", Latency: []Latency{{Client: ClientBackend, EndToEnd: Percentiles{P50: 10, P90: 10, P99: 10, P999: 10, Max: 10, N: 1}}}}})
	if strings.Contains(one, "NaN") || len(svgAttrs(t, one, "line", "grid", "y1")) != 2 {
		t.Errorf("a chart of 10 ms alone: %s", one)
	}
	if LatencySVG([]*Bench{{Backend: "m", Latency: []Latency{{Client: ClientBackend, EndToEnd: Percentiles{N: 0}}}}}) != "" {
		t.Error("a chart of nothing measured")
	}
}

// A page that cannot be written is an error, not a partial success.
func TestWritePerformancePageError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bench.html"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePerformancePage(dir, benchFixture()); err == nil {
		t.Error("bench.html is a directory, and no error")
	}
}
