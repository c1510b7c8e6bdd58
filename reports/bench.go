package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Bench is one backend's performance run, reports/out/bench-<backend>.json. bench/cmd/bench
// writes it (one file per backend, the raw client's figures on the same broker inside it); this
// package reads it for the Performance section of compare.md and compare.html.
type Bench struct {
	Backend       string  `json:"backend"`
	Description   string  `json:"description,omitempty"`
	Broker        string  `json:"broker,omitempty"` // broker kind ("kafka", "pulsar"); "" = in-process
	BrokerVersion string  `json:"brokerVersion,omitempty"`
	Provider      string  `json:"provider,omitempty"`
	StartedAt     string  `json:"startedAt"`
	Seconds       float64 `json:"seconds"` // wall time of this backend's bench
	Machine       Machine `json:"machine"`
	// Smoke marks a shortened run (the make-test smoke): its numbers say the code works, nothing more.
	Smoke bool `json:"smoke,omitempty"`

	Throughput []Throughput `json:"throughput"`
	Latency    []Latency    `json:"latency"`
	Subscribe  *Subscribe   `json:"subscribe,omitempty"`
	Consume    []Consume    `json:"consume,omitempty"`
	// Ratios is backend/raw for each figure measured on both (see ComputeRatios).
	Ratios []Ratio `json:"ratios,omitempty"`
	// Errors are workloads that could not run to the end, one line each.
	Errors []string `json:"errors,omitempty"`
}

// Machine says where the numbers were taken. The harness's own machine is shared by several
// jobs, so Load1 at the start of the run is recorded beside the core count.
type Machine struct {
	CPUs   int     `json:"cpus"`
	GOOS   string  `json:"goos"`
	GOARCH string  `json:"goarch"`
	Load1  float64 `json:"load1,omitempty"` // 1-minute load average when the run started (Linux)
	Note   string  `json:"note,omitempty"`
}

// Client names in Throughput and Latency.
const (
	ClientBackend = "backend" // through the contract (backends.Open)
	ClientRaw     = "raw"     // the broker's own client library: its defaults plus the contract's guarantees
	// ClientRawSame is the raw client with the backend's own performance settings too (linger,
	// batching): backend/raw-same is the adapter's own cost, backend/raw includes its choices.
	ClientRawSame = "raw-same-settings"
)

// Throughput is one confirmed-send run: Senders goroutines each Send and wait for the broker's
// confirmation before the next, Messages in all.
type Throughput struct {
	Client     string  `json:"client"`
	ClientInfo string  `json:"clientInfo,omitempty"` // library and settings
	Senders    int     `json:"senders"`
	Messages   int     `json:"messages"`
	Bytes      int     `json:"bytes"` // payload size of each message
	Seconds    float64 `json:"seconds"`
	MsgsPerSec float64 `json:"msgsPerSec"`
	MBPerSec   float64 `json:"mbPerSec"` // 10^6 payload bytes per second
	Errors     int     `json:"errors"`
}

// Latency is one fixed-rate run: end-to-end latency (intended send time -> received, before
// the ack) and
// confirmation latency (intended send time -> Send returned), both from the INTENDED send time
// so a stalled sender cannot hide the delay (coordinated omission), as wrk2 and OMB do.
// Milliseconds, from an HdrHistogram with 3 significant digits.
type Latency struct {
	Client     string      `json:"client"`
	ClientInfo string      `json:"clientInfo,omitempty"`
	Rate       int         `json:"rate"` // offered msgs/s
	Seconds    float64     `json:"seconds"`
	Bytes      int         `json:"bytes"`
	Sent       int         `json:"sent"`
	Received   int         `json:"received"`
	Duplicates int         `json:"duplicates"` // redeliveries of a message already received
	Acked      int         `json:"acked"`
	SendErrors int         `json:"sendErrors"`
	EndToEnd   Percentiles `json:"endToEnd"`
	Send       Percentiles `json:"send"`
	// Ack is received -> Ack returned, acks issued in receive order by one goroutine beside
	// the receiving one: how far acknowledgement lags behind delivery.
	Ack Percentiles `json:"ack"`
}

// Percentiles in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	N    int64   `json:"n"`
}

// Consume is one receive-and-ack run: Consumers consumers, each on a subscription of its own,
// receive and ack (inline, one after the other) the Messages sent before they started.
type Consume struct {
	Client     string  `json:"client"`
	ClientInfo string  `json:"clientInfo,omitempty"`
	Consumers  int     `json:"consumers"`
	Messages   int     `json:"messages"` // per consumer
	Bytes      int     `json:"bytes"`
	Seconds    float64 `json:"seconds"` // the slowest consumer's time to its last ack
	// AcksPerSec is the mean over the consumers of each one's acks per second.
	AcksPerSec float64 `json:"acksPerSec"`
	// TotalAcksPerSec is every consumer's acks over the slowest one's time.
	TotalAcksPerSec float64 `json:"totalAcksPerSec"`
	Acked           int     `json:"acked"`
	Errors          int     `json:"errors"` // consumers that stopped on an error
}

// ConsumeOf returns the consume run of client with consumers, or nil.
func (b *Bench) ConsumeOf(client string, consumers int) *Consume {
	for i := range b.Consume {
		if b.Consume[i].Client == client && b.Consume[i].Consumers == consumers {
			return &b.Consume[i]
		}
	}
	return nil
}

// Subscribe is the time Consumer() takes to return a live subscription, in milliseconds.
type Subscribe struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Ratio is backend/raw for one figure. For throughput above 1 is better; for latency above 1
// means the backend is slower. "adapter throughput" figures divide by the raw client with the
// backend's own settings (ClientRawSame).
type Ratio struct {
	Figure  string  `json:"figure"` // "throughput senders=8", "latency p99"
	Backend float64 `json:"backend"`
	Raw     float64 `json:"raw"`
	Ratio   float64 `json:"ratio"`
}

// ThroughputOf returns the run of client with senders, or nil.
func (b *Bench) ThroughputOf(client string, senders int) *Throughput {
	for i := range b.Throughput {
		if b.Throughput[i].Client == client && b.Throughput[i].Senders == senders {
			return &b.Throughput[i]
		}
	}
	return nil
}

// LatencyOf returns the fixed-rate run of client, or nil.
func (b *Bench) LatencyOf(client string) *Latency {
	for i := range b.Latency {
		if b.Latency[i].Client == client {
			return &b.Latency[i]
		}
	}
	return nil
}

// ComputeRatios fills Ratios from the figures measured on both clients.
func (b *Bench) ComputeRatios() {
	b.Ratios = nil
	add := func(fig string, be, raw float64) {
		if be > 0 && raw > 0 {
			b.Ratios = append(b.Ratios, Ratio{Figure: fig, Backend: be, Raw: raw, Ratio: be / raw})
		}
	}
	var senders []int
	for _, t := range b.Throughput {
		if t.Client == ClientBackend {
			senders = append(senders, t.Senders)
		}
	}
	sort.Ints(senders)
	for _, s := range senders {
		be := b.ThroughputOf(ClientBackend, s)
		if raw := b.ThroughputOf(ClientRaw, s); raw != nil && be.Errors == 0 && raw.Errors == 0 {
			add(fmt.Sprintf("throughput senders=%d", s), be.MsgsPerSec, raw.MsgsPerSec)
		}
		if raw := b.ThroughputOf(ClientRawSame, s); raw != nil && be.Errors == 0 && raw.Errors == 0 {
			add(fmt.Sprintf("adapter throughput senders=%d", s), be.MsgsPerSec, raw.MsgsPerSec)
		}
	}
	if be, raw := b.LatencyOf(ClientBackend), b.LatencyOf(ClientRaw); be != nil && raw != nil {
		add("latency p50", be.EndToEnd.P50, raw.EndToEnd.P50)
		add("latency p99", be.EndToEnd.P99, raw.EndToEnd.P99)
	}
	for _, c := range b.Consume {
		if c.Client != ClientBackend || c.Errors > 0 {
			continue
		}
		if raw := b.ConsumeOf(ClientRaw, c.Consumers); raw != nil && raw.Errors == 0 {
			add(fmt.Sprintf("consume consumers=%d", c.Consumers), c.AcksPerSec, raw.AcksPerSec)
		}
	}
}

// RatioOf returns the ratio named fig, or 0.
func (b *Bench) RatioOf(fig string) float64 {
	for _, r := range b.Ratios {
		if r.Figure == fig {
			return r.Ratio
		}
	}
	return 0
}

// Write writes b as indented JSON to path, creating its directory.
func (b *Bench) Write(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// BenchFile is where bench/cmd/bench writes backend's results under dir.
func BenchFile(dir, backend string) string {
	return filepath.Join(dir, "bench-"+backend+".json")
}

// ReadBench reads one bench file.
func ReadBench(path string) (*Bench, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read bench results: %w", err)
	}
	var b Bench
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: malformed bench JSON: %w", path, err)
	}
	if b.Backend == "" {
		return nil, fmt.Errorf("%s: bench JSON without a backend name", path)
	}
	return &b, nil
}

// ReadBenches reads every bench-*.json in dir, sorted by backend. No file is no error.
func ReadBenches(dir string) ([]*Bench, error) {
	files, err := filepath.Glob(filepath.Join(dir, "bench-*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Bench
	for _, f := range files {
		b, err := ReadBench(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Backend < out[j].Backend })
	return out, nil
}
