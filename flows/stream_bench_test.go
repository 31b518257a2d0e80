package flows_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// BenchmarkCSVWriter writes the rows of the fixture captures' attempts,
// or of the capture BENCH_CAPTURE names, one at a time: from the
// attempts (Write), and from their rows (WriteRow), as flows -o csv
// writes the rows handed on.
func BenchmarkCSVWriter(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "captures", "*.pcap"))
	if p := os.Getenv("BENCH_CAPTURE"); p != "" {
		paths = []string{p}
	}
	if err != nil || len(paths) == 0 {
		b.Fatalf("no capture: %v", err)
	}
	var all []model.Attempt
	for _, p := range paths {
		snap, _, err := parse.Open(context.Background(), p, &parse.Options{Formats: captureFormats(), KeepAttempts: true})
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, snap.Attempts...)
	}
	b.Run("attempts", func(b *testing.B) {
		w := flows.NewCSVWriter(io.Discard, flows.Filter{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			w.Write(&all[i%len(all)])
		}
	})
	b.Run("rows", func(b *testing.B) {
		rows := make([]model.Row, len(all))
		for i := range all {
			rows[i] = all[i].Row()
		}
		w := flows.NewCSVWriter(io.Discard, flows.Filter{})
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			w.WriteRow(&rows[i%len(rows)])
		}
	})
}
