package bundle

import "testing"

// Zero and negative limits take the defaults; the others are kept.
func TestLimitsWithDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits() {
		t.Errorf("zero limits: %+v, want the defaults %+v", got, DefaultLimits())
	}
	want := DefaultLimits()
	want.MaxDepth, want.MaxFileBytes = 2, 1<<20
	if got := (Limits{MaxDepth: 2, MaxFileBytes: 1 << 20, MaxRatio: -1}).withDefaults(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	want = DefaultLimits()
	want.MaxMemory, want.MaxInputMemory = 1<<30, 1<<29
	if got := (Limits{MaxMemory: 1 << 30}).withDefaults(); got != want {
		t.Errorf("MaxMemory alone: got %+v, want MaxInputMemory half of it", got)
	}
}
