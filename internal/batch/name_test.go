package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/results"
)

// TestResumeNonUTF8: two bundles whose names differ in a byte that is not
// UTF-8 get a line and (in the fleet build) a database row each, and
// --resume finds both done.
func TestResumeNonUTF8(t *testing.T) {
	dir := t.TempDir()
	var bundles []string
	for _, name := range []string{"b\xfe", "b\xff"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "sysctl.txt"), []byte("net.ipv4.ip_local_port_range = 32768\t60999\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, p)
	}
	out, db := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "r.db")
	switch s, err := openDB(t.Context(), db); {
	case errors.Is(err, results.ErrNoDatabase):
		db = "" // the laptop build keeps JSON Lines only
	case err != nil:
		t.Fatal(err)
	default:
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	o := &Options{}
	for run := range 2 {
		sinks, done, err := OpenSinks(t.Context(), nil, out, true, db, true)
		if err != nil {
			t.Fatal(err)
		}
		todo := slices.DeleteFunc(slices.Clone(bundles), func(b string) bool { return done[o.LineName(b)] })
		if want := map[int]int{0: 2, 1: 0}[run]; len(todo) != want {
			t.Errorf("run %d: %d bundles to analyze, want %d (done: %v)", run, len(todo), want, done)
		}
		Run(t.Context(), func() {}, todo, 1, o, sinks, done, func(int, Result) {})
		if err := sinks.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l results.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(l.Bundle))
	}
	slices.Sort(names)
	if want := []string{`b\xfe`, `b\xff`}; !slices.Equal(names, want) {
		t.Errorf("lines name %q, want %q", names, want)
	}
}
