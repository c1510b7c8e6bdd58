package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
