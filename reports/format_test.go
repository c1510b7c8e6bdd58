package reports

import (
	"testing"
	"time"
)

// A duration reads in the unit it reaches, from the unit's first value on: exactly 1 ms is
// "1ms", exactly 1 s "1.0s", exactly a minute "1m0s"; nothing (zero or less) is blank.
func TestFmtDurationUnitsFromTheirFirstValue(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "",
		0:                                     "",
		time.Nanosecond:                       "<1ms",
		time.Millisecond - 1:                  "<1ms",
		time.Millisecond:                      "1ms",
		999 * time.Millisecond:                "999ms",
		time.Second:                           "1.0s",
		59*time.Second + 940*time.Millisecond: "59.9s",
		time.Minute:                           "1m0s",
		90*time.Second + 400*time.Millisecond: "1m30s",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for s, want := range map[float64]string{0: "", -1: "", 0.0005: "<1ms", 1: "1.0s", 75.5: "1m16s"} {
		if got := fmtSeconds(s); got != want {
			t.Errorf("fmtSeconds(%v) = %q, want %q", s, got, want)
		}
	}
}

// Milliseconds: three decimals below 1 ms, one below 100 ms, none from 100 ms on; a ratio
// of nothing is "-".
func TestFmtMsAndRatioBoundaries(t *testing.T) {
	for v, want := range map[float64]string{
		-1: "-", 0: "-", 0.0004: "0.000 ms", 0.25: "0.250 ms", 1: "1.0 ms", 99.94: "99.9 ms", 100: "100 ms", 1234.4: "1234 ms",
	} {
		if got := fmtMs(v); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", v, got, want)
		}
	}
	for r, want := range map[float64]string{-0.5: "-", 0: "-", 0.001: "0.00x", 1: "1.00x"} {
		if got := fmtRatio(r); got != want {
			t.Errorf("fmtRatio(%v) = %q, want %q", r, got, want)
		}
	}
}
