package plots

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The CDF of three values steps to a third, two thirds and one at each,
// from the origin, whatever their order.
func TestCDF(t *testing.T) {
	got := CDF([]float64{3, 1, 2})
	want := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1.0 / 3}, {X: 2, Y: 2.0 / 3}, {X: 3, Y: 1}}
	if len(got) != len(want) {
		t.Fatalf("CDF %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// Rows of different lengths tile into one PNG of the asked size; ticks
// read 1.2, not 1.2000000000000002.
func TestSaveTilesRowsAndLabelsTicks(t *testing.T) {
	a := New("a", "s", "count")
	if err := Line(a, "measured", plotter.XYs{{X: 0, Y: 0}, {X: 1.2, Y: 3}}, Style{Points: true}); err != nil {
		t.Fatal(err)
	}
	if err := Line(a, "floor", plotter.XYs{{X: 0, Y: 0}, {X: 1.2, Y: 2}}, Style{Dashed: true, Steps: true}); err != nil {
		t.Fatal(err)
	}
	if err := VLine(a, "deadline", 1, 3); err != nil {
		t.Fatal(err)
	}
	b, c := New("b", "s", "count"), New("c", "s", "count")
	path := filepath.Join(t.TempDir(), "p.png")
	if err := Save(path, vg.Points(600), vg.Points(400), []*plot.Plot{a, b}, []*plot.Plot{c}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 533 { // 96 dpi
		t.Errorf("image %dx%d, want 800x533", b.Dx(), b.Dy())
	}
	for _, tick := range (PlainTicks{}).Ticks(0, 1.4) {
		if len(tick.Label) > 4 {
			t.Errorf("tick label %q", tick.Label)
		}
	}
}
