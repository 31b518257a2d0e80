package parse_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// hostileLimits are budgets small enough that the archives of
// fixtures/hostile go past them.
var hostileLimits = parse.Limits{MaxMemory: 32 << 20, MaxInputMemory: 16 << 20, MaxEntries: 10000}

// Every archive of fixtures/hostile (made by its gen.go) is read within
// the budgets: Open returns in time, without panicking, with a warning
// naming the member refused or cut short, and with the benign sysctl dump
// beside it read.
func TestHostileFixtures(t *testing.T) {
	cases := []struct {
		file string
		// warn names the member a warning is about ("" for the archive
		// itself) and what the warning says.
		warnAt, warn string
		// read are members (after the last "!") that must be read with
		// at least the given number of records.
		read map[string]int
	}{
		{"sysctl-bomb.tar.gz", "bundle/huge-sysctl.txt.gz", "over the memory budget of one input (16 MiB", map[string]int{"bundle/sysctl.txt": 2, "bundle/huge-sysctl.txt.gz": 1}},
		{"zip-overlap.zip", "", "1999 members whose data overlaps another's", map[string]int{"sysctl.txt": 2, "node1/sysctl.txt": 0, "sysctl-0.txt": 1}},
		{"tar-sparse.tar.gz", "bundle/sparse-0.txt", "sparse member of 4 GiB", map[string]int{"bundle/sysctl.txt": 2}},
		{"gzip-trailer.tar", "bundle/services.json.gz", "invalid checksum", map[string]int{"bundle/sysctl.txt": 2}},
		{"encodings.zip", "", "", map[string]int{"bundle/sysctl.txt": 2, "bundle/sysctl-bom.txt": 1, "bundle/sysctl-utf16.txt": 2, "bundle/services.json": 1}},
		{"nested-zip.tar.gz", "", "", map[string]int{"bundle/sysctl.txt": 2, "node1/sysctl.txt": 1}},
	}
	dir := filepath.Join("..", "fixtures", "hostile")
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("fixture missing (run fixtures/hostile/make.sh): %v", err)
			}
			// Open stops at the budgets, so it returns in seconds; the
			// bound only catches a budget applied after the fact (the race
			// detector slows decompression several times over, and a
			// loaded machine more).
			limit := 30 * time.Second
			if testutil.Race {
				limit *= 4
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*limit)
			defer cancel()
			start := time.Now()
			snap, warns, err := parse.Open(ctx, path, &parse.Options{Limits: hostileLimits})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if d := time.Since(start); d > limit {
				t.Errorf("Open took %v, over %v", d, limit)
			}
			if c.warn != "" {
				want := path
				if c.warnAt != "" {
					want += "!" + c.warnAt
				}
				found := false
				for _, w := range warns {
					if w.Pos.File == want && strings.Contains(w.Error(), c.warn) {
						found = true
						if !errors.Is(w, parse.ErrLimit) && !strings.Contains(c.warn, "checksum") {
							t.Errorf("warning %v does not wrap ErrLimit", w)
						}
					}
				}
				if !found {
					t.Errorf("no warning on %s containing %q; warnings:\n%v", want, c.warn, warns)
				}
			} else if len(warns) > 0 {
				t.Errorf("warnings on a benign archive:\n%v", warns)
			}
			byMember := map[string]model.Input{}
			for _, in := range snap.Inputs {
				byMember[in.Path[strings.LastIndex(in.Path, "!")+1:]] = in
			}
			for m, n := range c.read {
				in, ok := byMember[m]
				if n == 0 {
					if ok {
						t.Errorf("%s was read: %+v", m, in)
					}
					continue
				}
				if !ok || in.Skipped != "" || in.Records < n {
					t.Errorf("%s: %+v, want it read with at least %d records", m, in, n)
				}
			}
			if c.file == "sysctl-bomb.tar.gz" {
				// What was read is kept, up to the input's budget (and
				// the read that went past it): 5 bytes for each byte and
				// 32 for each line, of lines of at least 32 bytes.
				in := byMember["bundle/huge-sysctl.txt.gz"]
				if max := int((hostileLimits.MaxInputMemory + 1<<20) / (5*32 + 32)); in.Records > max {
					t.Errorf("the bomb gave %d records, more than its budget allows (%d)", in.Records, max)
				}
				if len(snap.Sysctls) > 200000 {
					t.Errorf("%d sysctls kept", len(snap.Sysctls))
				}
			}
			if c.file == "zip-overlap.zip" && len(snap.Inputs) > 10 {
				t.Errorf("%d inputs read from the overlapping zip", len(snap.Inputs))
			}
		})
	}
}

// A kubectl List is decoded whole: past the input's share it keeps nothing,
// and what it was charged goes back to the bundle, so that the files after
// it are still read.
func TestDocumentBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc-%d","namespace":"default"},"spec":{"type":"ClusterIP","clusterIP":"10.96.%d.%d","ports":[{"port":80,"protocol":"TCP"}]}}`, i, i/250, i%250)
	}
	b.WriteString("]}\n")
	dir := t.TempDir()
	for i := range 6 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("services-%d.json", i)), []byte(b.String()), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "zz-sysctl.txt"), []byte("net.ipv4.ip_forward = 1\n"), 0o644)
	lim := parse.Limits{MaxMemory: 2 << 20, MaxInputMemory: 1 << 20}
	snap, warns, err := parse.Open(context.Background(), dir, &parse.Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		name := filepath.Join(dir, fmt.Sprintf("services-%d.json", i))
		found := false
		for _, w := range warns {
			found = found || (w.Pos.File == name && errors.Is(w, parse.ErrLimit) && strings.Contains(w.Error(), "Limits.MaxInputMemory"))
		}
		if !found {
			t.Errorf("%s: no warning of the input's budget; warnings:\n%v", name, warns)
		}
	}
	if len(snap.Kube.Services) != 0 {
		t.Errorf("%d services kept from cut documents", len(snap.Kube.Services))
	}
	if len(snap.Sysctls) != 1 {
		t.Errorf("the file after the cut documents was not read: %v", warns)
	}
	// A document within its share is read whole.
	snap, warns, _ = parse.Open(context.Background(), filepath.Join(dir, "services-0.json"), &parse.Options{Limits: parse.Limits{MaxInputMemory: 64 << 20}})
	if len(snap.Kube.Services) != 3000 || len(warns) != 0 {
		t.Errorf("%d services, warnings %v", len(snap.Kube.Services), warns)
	}
}
