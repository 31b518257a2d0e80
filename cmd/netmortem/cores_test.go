package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
)

// TestCoresSameOutput runs analyze (its JSON findings) and flows (its CSV)
// on every capture of the fixtures and of the shared corpus, on one core
// and on three: a capture's TCP streams are tracked in as many shards as
// there are cores (GOMAXPROCS), and what netmortem prints must not depend
// on how many there were. Under the race detector a sample of the
// captures is run; make test runs them all without it.
func TestCoresSameOutput(t *testing.T) {
	isCapture := func(path string, head []byte) bool {
		_, ok := capture.Sniff(head)
		return ok || head[0] == 0x1f && head[1] == 0x8b && strings.Contains(path, ".pcap")
	}
	all := testutil.FilesByHead(t, isCapture, fixture(""))
	if len(all) < 40 {
		t.Fatalf("only %d captures in the fixtures", len(all))
	}
	base := os.Getenv("NETMORTEM_CORPUS")
	if base == "" {
		base = filepath.Join(testutil.Root(), "..", "shared", "corpus")
	}
	if corpus := filepath.Join(base, "pcap"); dirExists(corpus) {
		all = append(all, testutil.FilesByHead(t, isCapture, corpus)...)
	} else {
		t.Logf("shared corpus not present (%s): the fixtures' captures only", corpus)
	}
	files := sampled(t, all)
	t.Logf("%d captures", len(files))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	// flows' tables are sized and laid out on as many goroutines as
	// there are cores, too.
	commands := [][]string{{"analyze", "-o", "json"}, {"flows", "-o", "csv"}, {"flows", "--width", "80"}, {"flows", "--width", "0"}}
	for _, file := range files {
		for _, cmd := range commands {
			args := append(append([]string{}, cmd...), file)
			var outs [2]string
			var codes [2]int
			for i, procs := range []int{1, 3} {
				runtime.GOMAXPROCS(procs)
				codes[i], outs[i], _ = runCLI(t, args...)
			}
			if outs[0] == "" {
				t.Errorf("%s: no output", strings.Join(args, " "))
			}
			if codes[0] != codes[1] || outs[0] != outs[1] {
				t.Errorf("%s on 1 core (exit %d, want) and on 3 (exit %d, got) differ:\n%s", strings.Join(args, " "),
					codes[0], codes[1], testutil.DiffLines(outs[0], outs[1]))
			}
		}
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
