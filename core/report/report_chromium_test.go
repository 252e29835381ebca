package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// findChromium returns the Chromium binary: $WEFT_CHROMIUM, else the first
// of chromium, chromium-browser, google-chrome on PATH. Without one the test
// is skipped, unless WEFT_REQUIRE_CHROMIUM=1 (CI, which installs Debian's
// chromium in .ci/run) makes that a failure.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WEFT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("WEFT_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium on PATH (nor $WEFT_CHROMIUM) and WEFT_REQUIRE_CHROMIUM=1")
	}
	t.Skip("no chromium on PATH (set WEFT_CHROMIUM, or WEFT_REQUIRE_CHROMIUM=1 to fail instead)")
	return ""
}

// runChromium runs headless Chromium on url with extra flags and returns
// its stdout.
func runChromium(t *testing.T, bin, profile, url string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--disable-extensions", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--force-device-scale-factor=1",
		"--user-data-dir=" + profile,
	}, flags...)
	args = append(args, url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", bin, args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestReportInChromium renders the fixture report in headless Chromium:
// the DOM Chromium parsed holds every chart's <svg> with its exact labels
// and the tables' numbers, and a screenshot shows each chart's bars in
// their colours.
func TestReportInChromium(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.ToSlash(path)
	profile := filepath.Join(dir, "profile")

	dom := runChromium(t, bin, profile, url, "--dump-dom")
	if len(dom) == 0 {
		t.Fatal("chromium dumped an empty DOM")
	}
	checkReportDOM(t, string(dom))

	const width, height = 1000, 3800 // the whole fixture report fits (~3000px)
	shot := filepath.Join(dir, "report.png")
	runChromium(t, bin, profile, url, fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Fatalf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), width, height)
	}
	// Each chart's bar colour covers about 90% of the bar area the
	// geometry gives (bars 18px high, fraction 1 = 380px; histogram
	// columns 57.6px wide, the tallest 196px): pass rate (190+253.3)*18,
	// histogram 57.6*(3*49+196), tool errors (47.5+95)*18, policy
	// attributions 380*18, attempts 57.6*(196+2*49); each round curve its
	// four 12px point marks (4*144) and its 3px line between them (~620px
	// long on the fixture: ~1,900 pixels less the anti-aliased edges).
	charts := []struct {
		id      string
		rgb     [3]uint8
		atLeast int
	}{
		{ChartPassRate, [3]uint8{0x2f, 0x6f, 0xb5}, 7200},
		{ChartScoreHistogram, [3]uint8{0x2c, 0x7a, 0x7b}, 17700},
		{ChartToolErrorRate, [3]uint8{0xc0, 0x56, 0x21}, 2300},
		{ChartAttributions, [3]uint8{0x6b, 0x46, 0xc1}, 6150},
		{ChartRejectionAttempts, [3]uint8{0x80, 0x5a, 0xd5}, 15200},
		{ChartRoundsToolErrorRate, [3]uint8{0xdd, 0x6b, 0x20}, 1550},
		{ChartRoundsPassRate, [3]uint8{0x31, 0x82, 0xce}, 1550},
	}
	var colours [][3]uint8
	for _, c := range charts {
		colours = append(colours, c.rgb)
	}
	for i, n := range countColours(img, colours) {
		c := charts[i]
		t.Logf("%s: %d pixels of #%02x%02x%02x", c.id, n, c.rgb[0], c.rgb[1], c.rgb[2])
		if n < c.atLeast {
			t.Errorf("%s: %d pixels of #%02x%02x%02x in the screenshot, want >= %d", c.id, n, c.rgb[0], c.rgb[1], c.rgb[2], c.atLeast)
		}
	}
}

// countColours counts, for each colour, the pixels of img within 2 per
// channel of it, in one pass (over the pixel buffer when img is RGBA or
// NRGBA, as png.Decode returns for a screenshot).
func countColours(img image.Image, colours [][3]uint8) []int {
	counts := make([]int, len(colours))
	add := func(r, g, b uint8) {
		for i, c := range colours {
			if near(r, c[0]) && near(g, c[1]) && near(b, c[2]) {
				counts[i]++
			}
		}
	}
	switch m := img.(type) {
	case *image.RGBA:
		scan(m.Pix, m.Stride, m.Rect, add)
	case *image.NRGBA:
		scan(m.Pix, m.Stride, m.Rect, add)
	default:
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				add(c.R, c.G, c.B)
			}
		}
	}
	return counts
}

func scan(pix []uint8, stride int, r image.Rectangle, add func(r, g, b uint8)) {
	for y := 0; y < r.Dy(); y++ {
		row := pix[y*stride : y*stride+4*r.Dx()]
		for x := 0; x < len(row); x += 4 {
			add(row[x], row[x+1], row[x+2])
		}
	}
}

func near(a, b uint8) bool { return int(a)-int(b) >= -2 && int(a)-int(b) <= 2 }
