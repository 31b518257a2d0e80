package scale

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// ticket is one support bundle of the simulated object store: a tar.gz of
// a committed incident bundle, under a key of its own.
type ticket struct {
	key  string
	data []byte
}

// tickets makes n bundles: the incident bundles of fixtures/incidents (real
// captures, dumps and objects), round robin, each archived as a tar.gz under
// tickets/<group>/ticket-<i>-<incident>.tar.gz.
func tickets(t testing.TB, n int) []ticket {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "incidents", "*"))
	if err != nil || len(dirs) < 10 {
		t.Fatalf("incident bundles: %v (%d)", err, len(dirs))
	}
	sort.Strings(dirs)
	archives := make([][]byte, len(dirs))
	for i, d := range dirs {
		archives[i] = testutil.TarGzDir(t, d)
	}
	out := make([]ticket, n)
	for i := range out {
		j := i % len(dirs)
		out[i] = ticket{key: fmt.Sprintf("tickets/%02d/ticket-%05d-%s.tar.gz", i%16, i, filepath.Base(dirs[j])), data: archives[j]}
	}
	return out
}
