package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// The findings of an incident appear against its control bundle, and
// resolve the other way round.
func TestBundles(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures", "incidents")
	ctl, inc := filepath.Join(dir, "stale-dnat-control"), filepath.Join(dir, "stale-dnat")
	res, err := Bundles(t.Context(), ctl, inc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diff.Findings.Appeared) == 0 || res.Diff.Old != ctl || res.Diff.New != inc || len(res.Unreadable()) != 0 {
		t.Errorf("appeared %+v", res.Diff.Findings.Appeared)
	}
	back, err := Bundles(t.Context(), inc, ctl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Diff.Findings.Resolved) != len(res.Diff.Findings.Appeared) {
		t.Errorf("resolved %d, appeared %d", len(back.Diff.Findings.Resolved), len(res.Diff.Findings.Appeared))
	}
	if _, err := Bundles(t.Context(), filepath.Join(dir, "missing"), inc, nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing bundle: %v", err)
	}
}
