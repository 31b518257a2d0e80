package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testformats"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
)

// TestStdinArchive reads the layout trees as an archive on stdin (the path
// "-"): the same files, nodes and commands as from the archive on disk,
// named "<stdin>!member", held in memory or, past MaxMemoryBuffer, spilled
// to TempDir and removed afterwards.
func TestStdinArchive(t *testing.T) {
	trees := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	for _, format := range []string{"tar", "tar.gz", "tar.xz", "zip"} {
		t.Run(format, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "bundle."+format)
			archiveTree(t, trees, dst, format)
			b, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			for _, maxBuf := range []int64{0, 1024} {
				spill := t.TempDir()
				spilled := 0
				opts := &parse.Options{Stdin: bytes.NewReader(b), TempDir: spill, Limits: parse.Limits{MaxMemoryBuffer: maxBuf}}
				opts.Progress = func(model.Input) {
					if ents, _ := os.ReadDir(spill); len(ents) > spilled {
						spilled = len(ents)
					}
				}
				snap, warns := open(t, "-", opts)
				checkTrees(t, snap, bundle.StdinName+"!")
				if len(warns) != 0 {
					t.Errorf("MaxMemoryBuffer %d: unexpected warnings: %v", maxBuf, warns)
				}
				if maxBuf > 0 && spilled == 0 {
					t.Errorf("MaxMemoryBuffer %d: the archive on stdin was not spilled to TempDir", maxBuf)
				}
				if maxBuf == 0 && spilled != 0 {
					t.Errorf("default MaxMemoryBuffer: a small archive on stdin was spilled")
				}
				if ents, _ := os.ReadDir(spill); len(ents) != 0 {
					t.Errorf("TempDir holds %d files after Open: spill not removed", len(ents))
				}
			}
		})
	}
}

// TestStdinFile reads single files on stdin, plain and compressed: sniffed
// by content, named "<stdin>", merged with the paths given beside "-".
func TestStdinFile(t *testing.T) {
	for name, body := range map[string][]byte{"plain": []byte(sysctlBody), "gzip": gz([]byte(sysctlBody))} {
		t.Run(name, func(t *testing.T) {
			other := filepath.Join(t.TempDir(), "other.txt")
			os.WriteFile(other, []byte("net.core.somaxconn = 4096\n"), 0o644)
			opts := &parse.Options{Stdin: bytes.NewReader(body), Formats: testformats.All()}
			snap, warns, err := parse.OpenAll(t.Context(), []string{"-", other}, opts)
			if err != nil || len(warns) != 0 {
				t.Fatalf("err %v, warnings %v", err, warns)
			}
			got := inputs(snap, "")
			in, ok := got[bundle.StdinName]
			if !ok || in.Format != "test-sysctl" || in.Records != 2 {
				t.Errorf("stdin input %+v (found %v), want test-sysctl with 2 records", in, ok)
			}
			if got[filepath.ToSlash(other)].Records != 1 {
				t.Errorf("the file beside stdin: %+v", got[filepath.ToSlash(other)])
			}
			found := false
			for _, sc := range snap.Sysctls {
				if sc.Pos.File == bundle.StdinName && sc.Pos.Line == 1 {
					found = true
				}
			}
			if !found {
				t.Errorf("no sysctl positioned at %s:1: %+v", bundle.StdinName, snap.Sysctls)
			}
		})
	}
}

// TestStdinLimit bounds stdin as an archive member is: past MaxFileBytes it
// is read no further, with a limit warning naming it, and what was read is
// kept; so is a compressed stream past it.
func TestStdinLimit(t *testing.T) {
	body := bytes.Repeat([]byte("net.core.somaxconn = 4096\n"), 40000) // 1 MB
	for name, b := range map[string][]byte{"plain": body, "gzip": gz(body)} {
		t.Run(name, func(t *testing.T) {
			snap, warns := open(t, "-", &parse.Options{Stdin: bytes.NewReader(b), Limits: parse.Limits{MaxFileBytes: 512 << 10}})
			if !hasWarning(warns, parse.ErrLimit, bundle.StdinName) {
				t.Errorf("want a limit warning on %s, got %v", bundle.StdinName, warns)
			}
			// The line cut by the limit may be a syntax error too.
			if n := len(warns); n > 2 {
				t.Errorf("%d warnings, want the limit warning and at most the cut line: %s", n, warnList(warns))
			}
			if name == "plain" && !strings.Contains(warnList(warns), "stdin is larger than 512 KiB") {
				t.Errorf("the limit warning does not say stdin was cut: %s", warnList(warns))
			}
			if in := inputs(snap, "")[bundle.StdinName]; in.Records == 0 || in.Records >= 40000 {
				t.Errorf("stdin cut at the limit: want the records before the cut, got %+v", in)
			}
		})
	}
}

// TestStdinUnset: without Options.Stdin, "-" is a path like any other.
func TestStdinUnset(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, _, err := parse.Open(t.Context(), "-", nil)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("\"-\" without Stdin: err %v, want the missing file", err)
	}
}
