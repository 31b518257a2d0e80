package flows_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
)

// The rows TableWidths kept are written, by a TableWriter and by a
// FittedWriter at every width (blocks of a row at 12 columns), as the
// attempts they were formatted from are, filtered or not.
func TestKeptRowsAsAttempts(t *testing.T) {
	all := replayAttempts(3000)
	for _, f := range []flows.Filter{{}, {Ports: []uint16{1020, 1021, 1029}}, {Ports: []uint16{9}}} {
		for _, width := range []int{0, 12, 30, 80, 150} {
			b, m := flows.NewBuilder(f), flows.NewTableWidths()
			m.Keep(spoolFile(t))
			for i := range all {
				if b.Add(&all[i]) {
					m.Add(&all[i])
				}
			}
			var want, got bytes.Buffer
			writer := func(out *bytes.Buffer) closingWriter {
				if width == 0 {
					return flows.NewTableWriter(out, b.Table(nil), f, m)
				}
				return flows.NewFittedWriter(out, b.Table(nil), f, m, width)
			}
			w := writer(&want)
			for i := range all {
				w.Write(&all[i])
			}
			w.Close()
			w = writer(&got)
			if err := m.WriteRows(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if got.String() != want.String() {
				t.Errorf("filter %v, width %d:\n%s", f, width, testutil.DiffLines(want.String(), got.String()))
			}
			if err := m.WriteRows(context.Background(), w); err == nil {
				t.Errorf("filter %v, width %d: rows written twice", f, width)
			}
		}
	}
}

// WriteRows says why it writes nothing: no rows kept, a writer that is
// not a table's, a file that could not be written, or a context ended.
func TestKeptRowsRefused(t *testing.T) {
	all := replayAttempts(600)
	table := func(m *flows.TableWidths) closingWriter {
		return flows.NewTableWriter(&bytes.Buffer{}, &flows.Table{}, flows.Filter{}, m)
	}
	m := flows.NewTableWidths()
	m.Add(&all[0])
	if err := m.WriteRows(context.Background(), table(m)); err == nil || m.Kept() == nil {
		t.Errorf("rows not kept: %v, %v", err, m.Kept())
	}
	m = flows.NewTableWidths()
	m.Keep(spoolFile(t))
	m.Add(&all[0])
	if err := m.WriteRows(context.Background(), flows.NewJSONWriter(&bytes.Buffer{}, &flows.Table{}, flows.Filter{})); err == nil {
		t.Error("rows written through JSON")
	}
	m = flows.NewTableWidths()
	m.Keep(failing{})
	for i := range all {
		m.Add(&all[i])
	}
	if err := m.Kept(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("rows on a full disk: %v", err)
	}
	m = flows.NewTableWidths()
	m.Keep(spoolFile(t))
	for i := range all {
		m.Add(&all[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	w := flows.NewTableWriter(&out, &flows.Table{}, flows.Filter{}, m)
	if err := m.WriteRows(ctx, w); !errors.Is(err, context.Canceled) {
		t.Errorf("rows after the context ended: %v", err)
	}
	w.Close()
	if n := strings.Count(out.String(), "10.96.0.10"); n > 0 {
		t.Errorf("%d rows written after the context ended", n)
	}
}

// A rows file cut short or overwritten is an error naming the row, not a
// panic, a row made up or an allocation of what a length claims.
func TestKeptRowsDamaged(t *testing.T) {
	all := replayAttempts(50)
	for _, damage := range []struct {
		name string
		do   func(f *os.File, size int64) error
		want string
	}{
		{"cut", func(f *os.File, size int64) error { return f.Truncate(size - 3) }, "rows: row 50: unexpected EOF"},
		{"a length of 1 GiB", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{0, 0x80, 0x80, 0x80, 0x80, 0x04}, 0)
			return err
		}, "rows: row 1: lengths that do not add up, or cut short"},
		{"cells longer than the row", func(f *os.File, size int64) error {
			_, err := f.WriteAt(bytes.Repeat([]byte{0x7f}, 15), size-15)
			return err
		}, "rows: row 50: lengths that do not add up, or cut short"},
	} {
		m := flows.NewTableWidths()
		m.Keep(&damaged{File: spoolFile(t), do: damage.do})
		for i := range all {
			m.Add(&all[i])
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var out bytes.Buffer
		w := flows.NewTableWriter(&out, &flows.Table{}, flows.Filter{}, m)
		err := m.WriteRows(context.Background(), w)
		runtime.ReadMemStats(&after)
		if err == nil || err.Error() != damage.want {
			t.Errorf("%s: %v, want %q", damage.name, err, damage.want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("%s: %d bytes allocated", damage.name, n)
		}
	}
}

// Once its output fails, WriteRows reads no more rows, and the writer's
// Close says why.
func TestKeptRowsStopWhenWritingFails(t *testing.T) {
	all := replayAttempts(40000)
	for _, width := range []int{0, 80} {
		m := flows.NewTableWidths()
		f := &countingFile{File: spoolFile(t)}
		m.Keep(f)
		for i := range all {
			m.Add(&all[i])
		}
		var w closingWriter
		if width == 0 {
			w = flows.NewTableWriter(full{}, &flows.Table{}, flows.Filter{}, m)
		} else {
			w = flows.NewFittedWriter(full{}, &flows.Table{}, flows.Filter{}, m, width)
		}
		if err := m.WriteRows(context.Background(), w); err != nil {
			t.Fatalf("width %d: %v", width, err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); !errors.Is(err, errFull) || f.read >= st.Size()/2 {
			t.Errorf("width %d: Close %v; %d bytes of %d read after the output failed", width, err, f.read, st.Size())
		}
	}
}
