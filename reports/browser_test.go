package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The HTML page is checked in a real headless Chromium: it renders, shows every spec row, and
// the text a reader sees in a failing cell (innerText, which honours CSS and closed <details>)
// contains the cause. Chromium is required: install Debian's `chromium` package, or set
// REPORTS_SKIP_BROWSER=1 to skip explicitly. CHROMIUM may name the binary.

func chromiumPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("REPORTS_SKIP_BROWSER") == "1" {
		t.Skip("REPORTS_SKIP_BROWSER=1: headless browser check of the HTML report skipped on request")
	}
	candidates := []string{"chromium", "chromium-browser", "google-chrome"}
	if c := os.Getenv("CHROMIUM"); c != "" {
		candidates = []string{c}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Fatalf("headless browser check of the HTML report needs Chromium, none found (%s): "+
		"install it with `apt-get install -y chromium`, or set REPORTS_SKIP_BROWSER=1 to skip this test", strings.Join(candidates, ", "))
	return ""
}

// runChromium runs one headless Chromium command in its own process group, bounded by a
// timeout, and kills the whole group (renderer and GPU helpers included) when it is done.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftover helpers of a finished browser
	}
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// probe is appended to a copy of the page only: the report itself carries no script.
const probe = `<script>
var rows = [];
document.querySelectorAll("#matrix tr.spec").forEach(function (tr) {
  var cells = [];
  tr.querySelectorAll("td.cell").forEach(function (td) { cells.push(td.innerText); });
  rows.push({id: tr.getAttribute("data-id"), visible: tr.offsetHeight > 0, cells: cells});
});
var heads = [];
document.querySelectorAll("#matrix thead th").forEach(function (th) { heads.push(th.innerText); });
var out = document.createElement("pre");
out.id = "probe";
out.textContent = "PROBE" + JSON.stringify({rows: rows, heads: heads}) + "ENDPROBE";
document.body.appendChild(out);
</script>
</body>`

func TestHTMLInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	m := fixtureMatrix(t)
	var page bytes.Buffer
	if err := HTML(&page, m, Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "compare.html")
	probePath := filepath.Join(dir, "probe.html")
	writeFile(t, pagePath, page.String())
	writeFile(t, probePath, strings.Replace(page.String(), "</body>", probe, 1))

	t.Run("every row shown, failing cell shows its cause", func(t *testing.T) {
		dom := runChromium(t, bin, "--dump-dom", "file://"+probePath)
		mt := regexp.MustCompile(`(?s)<pre id="probe">PROBE(.*)ENDPROBE</pre>`).FindSubmatch(dom)
		if mt == nil {
			t.Fatalf("probe output missing from the rendered DOM:\n%s", tail(string(dom), 3000))
		}
		var got struct {
			Rows []struct {
				ID      string
				Visible bool
				Cells   []string
			}
			Heads []string
		}
		// The probe's JSON went through the DOM serializer as text: undo its escaping.
		raw := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`).Replace(string(mt[1]))
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("probe JSON: %v\n%s", err, raw)
		}
		if len(got.Rows) != len(m.Rows) {
			t.Fatalf("browser shows %d spec rows, matrix has %d", len(got.Rows), len(m.Rows))
		}
		visible := map[string][]string{}
		for i, r := range got.Rows {
			if r.ID != m.Rows[i].Key || !r.Visible || len(r.Cells) != len(m.Backends) {
				t.Errorf("row %d: %+v (want %s, visible, %d cells)", i, r, m.Rows[i].Key, len(m.Backends))
			}
			visible[r.ID] = r.Cells
		}
		checks := []struct {
			id      string
			backend int // index in m.Backends: kafka, pulsar, python, memory
			want    []string
		}{
			{"D2", 0, []string{"FAIL", "Timed out after 0.050s: message never arrived", "50ms"}},
			{"D7", 0, []string{"FAIL", "Expected receive: context deadline exceeded to match error timeout (entry: bounded receive on cancel)"}},
			{"A1", 2, []string{"FAIL", "AssertionError: no redelivery within 10s"}},
			{"T3", 0, []string{"SKIP", "backend lacks retention-expiry"}},
			{"D1", 1, []string{"NOT RUN", "BeforeSuite failed: start broker"}},
			{"D1", 0, []string{"PASS"}},
		}
		for _, c := range checks {
			cell := visible[c.id][c.backend]
			for _, w := range c.want {
				if !strings.Contains(cell, w) {
					t.Errorf("%s on %s: visible text %q lacks %q", c.id, m.Backends[c.backend].Label, cell, w)
				}
			}
		}
		if d := visible["D2"][0]; strings.Contains(d, "suite_test.go") {
			t.Errorf("the full failure message should stay folded in <details>, visible: %q", d)
		}
		if h := strings.Join(got.Heads, "|"); !strings.Contains(h, "memory") || !strings.Contains(h, "reference, not a conformance result") {
			t.Errorf("reference column not marked: %q", h)
		}
	})

	t.Run("renders a non-blank page", func(t *testing.T) {
		shot := filepath.Join(dir, "shot.png")
		runChromium(t, bin, "--screenshot="+shot, "--window-size=1400,900", "--hide-scrollbars", "file://"+pagePath)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatalf("no screenshot: %v", err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		b := img.Bounds()
		if b.Dx() < 1000 || b.Dy() < 600 {
			t.Fatalf("screenshot %v", b)
		}
		// The failing cells' red background must be painted: count pixels close to #fde2e1.
		red := 0
		for y := b.Min.Y; y < b.Max.Y; y += 2 {
			for x := b.Min.X; x < b.Max.X; x += 2 {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r>>8 > 0xf0 && g>>8 > 0xd0 && g>>8 < 0xf0 && bl>>8 > 0xd0 && bl>>8 < 0xf0 && r>>8-g>>8 > 0x10 {
					red++
				}
			}
		}
		if red < 200 {
			t.Errorf("only %d sampled pixels of failing-cell colour: the page did not render its matrix", red)
		}
	})
}
