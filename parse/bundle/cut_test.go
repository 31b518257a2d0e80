package bundle_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// A run cut short names every file of the bundle it did not reach as not
// read, the files of a rotated series and loose files alike, rather than
// leaving them out of the inputs unsaid. The run is cut here as the first
// input is listed.
func TestOpenCutNamesTheRest(t *testing.T) {
	rotated := filepath.Join(testutil.Root(), "fixtures/captures/rotated")
	loose := t.TempDir()
	for _, f := range []string{"captures/handshakes.pcap", "captures/portscan.pcap", "captures/text/handshakes.tcpdump.txt", "captures/arp.pcapng"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(loose, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{rotated, loose} {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) < 4 {
			t.Fatal(files, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		snap, _, _ := parse.Open(ctx, dir, &parse.Options{Progress: func(model.Input) { cancel() }})
		cancel()
		if snap == nil {
			t.Fatalf("%s: no snapshot", dir)
		}
		var read, cut, named []string
		for _, in := range snap.Inputs {
			named = append(named, in.Path)
			switch in.Skipped {
			case "":
				read = append(read, in.Path)
			case "not read: the run was cut short before it":
				cut = append(cut, in.Path)
			default:
				t.Errorf("%s: %s skipped: %s", dir, in.Path, in.Skipped)
			}
		}
		slices.Sort(named)
		if !slices.Equal(named, files) || len(read) != 1 || len(cut) != len(files)-1 {
			t.Errorf("%s: read %q, cut %q; want one of %q read and the others cut", dir, read, cut, files)
		}
	}
}

// A directory given after the input the run was cut short in is named as
// not read, as a file given after it is.
func TestOpenAllCutNamesTheDirectory(t *testing.T) {
	root := filepath.Join(testutil.Root(), "fixtures/captures")
	paths := []string{filepath.Join(root, "handshakes.pcap"), filepath.Join(root, "rotated"), filepath.Join(root, "portscan.pcap")}
	ctx, cancel := context.WithCancel(context.Background())
	snap, _, _ := parse.OpenAll(ctx, paths, &parse.Options{Progress: func(model.Input) { cancel() }})
	cancel()
	if snap == nil {
		t.Fatal("no snapshot")
	}
	var cut []string
	for _, in := range snap.Inputs {
		if in.Skipped == model.SkippedCutShort {
			cut = append(cut, in.Path)
		}
	}
	if len(cut) == 0 || !slices.ContainsFunc(cut, func(p string) bool { return strings.HasPrefix(p, paths[1]) }) ||
		!slices.Contains(cut, paths[2]) {
		t.Errorf("cut %q: want the directory %s, or its files, and %s", cut, paths[1], paths[2])
	}
}

// A text file whose read the run stops is listed as read to where it
// stopped, the stop its only warning beyond those the whole file gives:
// no half-read line read as a line, no object cut there called invalid,
// no parser taking the stop for the file's end unsaid. The files are
// longer than the head a format is sniffed from; one stopped within its
// head is listed as not read.
func TestStoppedTextIsCut(t *testing.T) {
	for _, f := range []string{
		"real/journald/falco-issue1052_journalctl-xeu-kubelet_pager-truncated-lines.txt",
		"real/conntrack/weave-scope-issue1110_conntrack-L_tcp-udp-mixed.txt",
		"incidents/stale-dnat/iptables-save.txt",
	} {
		one, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", f))
		if err != nil {
			t.Fatal(err)
		}
		b := bytes.Repeat(one, 200<<10/len(one)+1)
		_, whole, _ := parse.OpenAll(context.Background(), []string{"-"}, &parse.Options{Stdin: bytes.NewReader(b)})
		for _, at := range []int{1000, 70<<10 + 1, 100<<10 + 13, 150<<10 + 71, len(b) - 3} {
			ctx, cancel := context.WithCancel(context.Background())
			r := &testutil.CancelingReader{R: bytes.NewReader(b), Left: at, Ctx: ctx, Cancel: cancel}
			snap, warns, _ := parse.OpenAll(ctx, []string{"-"}, &parse.Options{Stdin: r})
			cancel()
			if len(snap.Inputs) != 1 {
				t.Fatalf("%s cut at %d: inputs %+v", f, at, snap.Inputs)
			}
			in := snap.Inputs[0]
			if at < 64<<10 {
				if in.Skipped != model.SkippedCutShort {
					t.Errorf("%s cut at %d, in its head: skipped %q, want %q", f, at, in.Skipped, model.SkippedCutShort)
				}
				continue
			}
			stops := 0
			for _, e := range warns {
				switch {
				case errors.Is(e, model.ErrStopped):
					stops++
				case !slices.ContainsFunc(whole, func(w *model.Error) bool { return w.Error() == e.Error() }):
					t.Errorf("%s cut at %d: %v, not a warning of the whole file", f, at, e)
				}
			}
			cuts := model.Cuts(warns)
			if in.Skipped != "" || stops != 1 || len(cuts) != 1 || cuts[0].File != in.Path {
				t.Errorf("%s cut at %d: skipped %q, %d stops, cuts %+v; want it read, cut once", f, at, in.Skipped, stops, cuts)
			}
		}
	}
}

// A context that ends once the path was read whole stopped nothing: Open
// returns no error for it. One that ends before the last file of a
// directory is read returns its error.
func TestOpenEndedAfterTheRead(t *testing.T) {
	for _, c := range []struct {
		path    string
		stopped bool
	}{
		{"fixtures/captures/handshakes.pcap", false},
		{"fixtures/incidents/stale-dnat/iptables-save.txt", false},
		{"fixtures/captures/rotated", true},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		_, warns, err := parse.Open(ctx, filepath.Join(testutil.Root(), c.path), &parse.Options{Progress: func(model.Input) { cancel() }})
		cancel()
		if stopped := errors.Is(err, context.Canceled); stopped != c.stopped {
			t.Errorf("%s: error %v, want the context's %v", c.path, err, c.stopped)
		}
		if !c.stopped && len(warns) > 0 {
			t.Errorf("%s: warnings %v, want none", c.path, warns.Err())
		}
	}
}

// cancelAt is a ReaderAt that cancels its context once a read reaches
// byte at.
type cancelAt struct {
	r      *bytes.Reader
	at     int64
	cancel context.CancelFunc
}

func (c *cancelAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > c.at {
		c.cancel()
	}
	return c.r.ReadAt(p, off)
}

// An archive whose index the run cuts short is said to be cut, since
// the members past what was indexed are not named; those indexed are
// named as not read.
func TestArchiveCutWhileIndexed(t *testing.T) {
	var ms []member
	for i := range 400 {
		// The archive is longer than the head it is recognized from,
		// and read in many reads.
		ms = append(ms, member{name: fmt.Sprintf("b/sysctl%03d.txt", i), typ: tar.TypeReg, body: uniqueSysctl(i)})
	}
	b := gz(writeTar(t, ms))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if len(b) < 192<<10 {
		t.Fatalf("the archive takes %d bytes, want 192 KiB at least", len(b))
	}
	ra := &cancelAt{r: bytes.NewReader(b), at: int64(len(b) * 2 / 3), cancel: cancel}
	snap, warns, err := parse.OpenReaderAt(ctx, "b.tar.gz", ra, int64(len(b)), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the context's", err)
	}
	notRead := 0
	for _, in := range snap.Inputs {
		if in.Skipped != model.SkippedCutShort {
			t.Errorf("%s: skipped %q, want not read", in.Path, in.Skipped)
		}
		notRead++
	}
	cuts := model.Cuts(warns)
	if notRead == 0 || notRead >= len(ms) || len(cuts) != 1 || cuts[0].File != "b.tar.gz" {
		t.Errorf("%d of %d members named, cuts %v; want some, and the archive cut", notRead, len(ms), cuts)
	}
}

// An input the run stops with nothing of it read is listed as not read,
// with no cut and no warning: an archive on standard input stopped while
// it is copied to be walked, a JSON document stopped before its end.
func TestStoppedWithNothingKept(t *testing.T) {
	var ms []member
	var list strings.Builder
	list.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
	for i := range 600 {
		ms = append(ms, member{name: fmt.Sprintf("b/sysctl%03d.txt", i), typ: tar.TypeReg, body: uniqueSysctl(i)})
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc%d", "namespace": "default"}, "spec": {"clusterIP": "10.96.%d.%d", "ports": [{"port": 80}]}}`+"\n", i, i/250, i%250+1)
	}
	list.WriteString("]}\n")
	for name, b := range map[string][]byte{"tar.gz": gz(writeTar(t, ms)), "json": []byte(list.String())} {
		if len(b) < 72<<10 {
			t.Fatalf("%s: %d bytes, want more than the 64 KiB head", name, len(b))
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := &testutil.CancelingReader{R: bytes.NewReader(b), Left: 70 << 10, Ctx: ctx, Cancel: cancel}
		snap, warns, _ := parse.OpenAll(ctx, []string{"-"}, &parse.Options{Stdin: r})
		cancel()
		if len(snap.Inputs) != 1 || snap.Inputs[0].Skipped != model.SkippedCutShort || len(warns) > 0 {
			t.Errorf("%s stopped at 70 KiB: inputs %+v, warnings %v; want it not read, nothing more", name, snap.Inputs, warns.Err())
		}
	}
}

// uniqueSysctl is a sysctl file of comments that do not repeat, so that
// an archive of them compresses little.
func uniqueSysctl(i int) []byte {
	var body []byte
	for j := range 16 {
		body = fmt.Appendf(body, "# %x\n", sha256.Sum256(fmt.Append(nil, i, j)))
	}
	return fmt.Appendf(body, "net.ipv4.ip_local_port_range = %d\t60999\n", 30000+i)
}

// A compressed file stopped within its first 64 KiB, which hold much
// more once decompressed, is read to where it stopped: its format is
// told from the head of what it holds.
func TestStoppedCompressedInItsHead(t *testing.T) {
	one, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/real/conntrack/weave-scope-issue1110_conntrack-L_tcp-udp-mixed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b := gz(bytes.Repeat(one, 1<<20/len(one)+1))
	if len(b) > 32<<10 {
		t.Fatalf("%d bytes compressed, want less than 32 KiB", len(b))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &testutil.CancelingReader{R: bytes.NewReader(b), Left: len(b) / 2, Ctx: ctx, Cancel: cancel}
	snap, warns, _ := parse.OpenAll(ctx, []string{"-"}, &parse.Options{Stdin: r})
	cancel()
	cuts := model.Cuts(warns)
	if len(snap.Inputs) != 1 || snap.Inputs[0].Skipped != "" || snap.Inputs[0].Records == 0 || len(cuts) != 1 || !strings.Contains(cuts[0].Where, "read to line") {
		t.Errorf("inputs %+v, cuts %v; want it read to a line", snap.Inputs, cuts)
	}
}

// TestDirectoryNotReached checks that a directory given after the run
// was stopped is listed as one not read, with a separator at its end: it
// is a directory, not a file.
func TestDirectoryNotReached(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sysctl.txt"), uniqueSysctl(1), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snap, _, err := parse.OpenAll(ctx, []string{dir}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the context's", err)
	}
	want := dir + string(filepath.Separator)
	if len(snap.Inputs) != 1 || snap.Inputs[0].Path != want || snap.Inputs[0].Skipped != model.SkippedCutShort {
		t.Errorf("inputs %+v, want %s not read", snap.Inputs, want)
	}
}
