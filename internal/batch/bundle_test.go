package batch

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/results"
)

// A bundle is analyzed within its budgets; one over its size budget, a
// pattern that matched nothing and a budget that ran out each give their
// status, with why.
func TestBundle(t *testing.T) {
	incident := filepath.Join(testutil.Root(), "fixtures", "incidents", "stale-dnat")
	res := Bundle(t.Context(), incident, nil)
	if res.Status != results.StatusOK || len(res.Findings) == 0 || res.Inputs == 0 || res.Bundle != incident {
		t.Errorf("%s (%s): %d findings, %d inputs", res.Status, res.Error, len(res.Findings), res.Inputs)
	}
	if res := Bundle(t.Context(), incident, &Options{MaxBytes: 100}); res.Status != results.StatusOverBudget ||
		!strings.Contains(res.Error, "on disk, over the 100-byte budget") {
		t.Errorf("size budget: %s (%s)", res.Status, res.Error)
	}
	if res := Bundle(t.Context(), filepath.Join(t.TempDir(), "*.tar.gz"), nil); res.Status != results.StatusUnreadable ||
		res.Error != "no path matches this pattern" {
		t.Errorf("pattern: %s (%s)", res.Status, res.Error)
	}
	if res := Bundle(t.Context(), incident, &Options{Timeout: time.Nanosecond}); res.Status != results.StatusTimeout {
		t.Errorf("time budget: %s (%s)", res.Status, res.Error)
	}
}
