package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/model"
)

// direct writes each row handed on, none once closed, and
// its close waits for a write under way: a read left behind after its
// deadline writes nothing after the end of the output.
func TestDirectClose(t *testing.T) {
	var out bytes.Buffer
	w := flows.NewCSVWriter(&out, flows.Filter{})
	d := &direct{w: w}
	a := func(port uint16) model.Row {
		return model.Row{Pos: model.Pos{File: "x.pcap", Frame: int(port)}, Outcome: model.OutcomeEstablished,
			Start:  time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC),
			Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), port),
			Server: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 2}), 80)}
	}
	first := a(1000)
	d.write(&first)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a late read, writing as the output closes
		defer wg.Done()
		for p := uint16(2000); p < 3000; p++ {
			late := a(p)
			d.write(&late)
		}
	}()
	d.close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	after := a(4000)
	d.write(&after)
	wg.Wait()
	if late := strings.TrimPrefix(out.String(), got); late != "" {
		t.Errorf("%d bytes written after close, the first row %q", len(late), strings.SplitAfter(late, "\n")[0])
	}
	rows := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(rows) < 2 || !strings.Contains(rows[1], "10.0.0.1:1000") {
		t.Fatalf("rows %q, want the header and the attempt written before close first", rows)
	}
	for _, r := range rows[1:] {
		if strings.Count(r, ",") != strings.Count(rows[0], ",") {
			t.Errorf("row %q cut short: its cells are not those of the header %q", r, rows[0])
		}
	}
}

// Without a temporary file to keep the attempts in (TMPDIR missing),
// flows reads a capture twice for the JSON and table forms. A capture
// that grows while it does (a capture still being written) is read once
// more whole when it changed during the first read; when it changed
// between the two reads (grown, or replaced by another file of the same
// size and time), what was written is said to disagree with the summary,
// with exit 3, and the columns sized by the first read do not break on
// wider cells; a capture gone before the second read is an error of its
// own. With the file, the capture is read once: what changes after the
// read changes nothing, and the file is gone once flows is.
func TestFlowsCaptureChanged(t *testing.T) {
	src := fixture("captures/handshakes.pcap")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	grow := func(file string) error { // the records again, their frames numbered on
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Write(data[24:])
		return err
	}
	replace := func(file string) error { // another file of the same size and time
		st, err := os.Stat(file)
		if err != nil {
			return err
		}
		other := file + ".new"
		if err := os.WriteFile(other, data, 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(other, st.ModTime(), st.ModTime()); err != nil {
			return err
		}
		return os.Rename(other, file)
	}
	for _, tc := range []struct {
		point, want string
		change      func(string) error
		code        int
		listed      bool // attempts are listed
		spool       bool // a temporary file keeps the attempts
	}{
		{"first read", "", grow, exitOK, true, true},
		{"first read", "", replace, exitOK, true, true},
		{"first read", "", os.Remove, exitOK, true, true},
		{"first read", "changed while it was read (a capture still being written?): read once more, every attempt held", grow, exitOK, true, false},
		{"between reads", "changed between the two reads of the captures: ", grow, exitUnreadable, true, false},
		{"between reads", "changed between the two reads of the captures: ", replace, exitUnreadable, true, false},
		{"between reads", "reading the captures again to list their attempts: ", os.Remove, exitUnreadable, false, false},
	} {
		for _, args := range [][]string{{"--width", "0"}, {"--width", "80"}, {"-o", "json"}} {
			file := filepath.Join(t.TempDir(), "growing.pcap")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, want, _ := runCLI(t, append([]string{"flows"}, append(args, file)...)...)
			tmp := t.TempDir()
			if !tc.spool {
				tmp = filepath.Join(tmp, "missing")
			}
			t.Setenv("TMPDIR", tmp)
			runTestHook = func(point string) {
				if point == tc.point {
					if err := tc.change(file); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, stdout, stderr := runCLI(t, append([]string{"flows"}, append(args, file)...)...)
			runTestHook = nil
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "internal error") ||
				(tc.want == "" && stderr != "") {
				t.Errorf("%s, flows %s: exit %d, stderr %q; want %d and %q", tc.point, args, code, stderr, tc.code, tc.want)
			}
			if tc.spool {
				if stdout != want {
					t.Errorf("%s, flows %s, read once: output\n%s\nwant\n%s", tc.point, args, stdout, want)
				}
				if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
					t.Errorf("%s, flows %s: left %v in TMPDIR (%v)", tc.point, args, left, err)
				}
			}
			if tc.listed && !strings.Contains(stdout, "#frame=") && !strings.Contains(stdout, `"frame": `) && !strings.Contains(stdout, "│ #") {
				t.Errorf("%s, flows %s: no attempt written:\n%s", tc.point, args, stdout)
			}
		}
	}
}

// A capture given twice, under one spelling or two, or beside the
// directory that holds it, is read once, as analyze reads it: the same
// output as given once, in every form.
func TestFlowsPathTwice(t *testing.T) {
	file := fixture("captures/handshakes.pcap")
	spelled := filepath.Dir(file) + "/./" + filepath.Base(file)
	dir := fixture("captures/rotated")
	inDir, err := filepath.Glob(filepath.Join(dir, "*43.pcap"))
	if err != nil || len(inDir) != 1 {
		t.Fatalf("%v %v", inDir, err)
	}
	for _, args := range [][]string{{"-o", "csv"}, {"-o", "json"}, {"--width", "80"}, {"--width", "0"}} {
		for _, c := range []struct{ once, twice []string }{
			{[]string{file}, []string{file, file}},
			{[]string{file}, []string{file, spelled}},
			{[]string{dir}, []string{dir, inDir[0]}},
		} {
			_, once, _ := runCLI(t, append(append([]string{"flows"}, args...), c.once...)...)
			code, twice, stderr := runCLI(t, append(append([]string{"flows"}, args...), c.twice...)...)
			if code != exitOK || twice != once {
				t.Errorf("flows %s %s: exit %d, stderr %q, output\n%s\nwant\n%s", args, c.twice, code, stderr, twice, once)
			}
		}
	}
}

// Given nothing it can read as a capture, flows says why each file was
// skipped, in the line that ends it: but for a file given whose content
// no format reads, which its warning names.
func TestFlowsNoCapture(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"empty.pcap": "", "notes.txt": "hello\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCLI(t, "flows", dir)
	want := "netmortem flows: no capture could be read: skipped 2 files (empty file: 1; unrecognized content: 1): "
	if code != exitUnreadable || !strings.Contains(stderr, want) {
		t.Errorf("a directory: exit %d, stderr %q; want %d and %q", code, stderr, exitUnreadable, want)
	}
	notes := filepath.Join(dir, "notes.txt")
	code, _, stderr = runCLI(t, "flows", filepath.Join(dir, "empty.pcap"), notes)
	want = "netmortem flows: no capture could be read: skipped 1 file (empty file): " + filepath.Join(dir, "empty.pcap") + "\n"
	if code != exitUnreadable || !strings.Contains(stderr, want) || !strings.Contains(stderr, notes+": unrecognized content") {
		t.Errorf("two files: exit %d, stderr %q; want %d, %q and the warning for notes.txt", code, stderr, exitUnreadable, want)
	}
}

// The files of a rotated series given as paths are read as one timeline
// as their attempts are written: flows writes, in every form, what it
// writes from every attempt held (--since +0s holds them). Its directory
// is written as it is read in the CSV form, and in the others when a
// temporary file keeps their attempts, each read once: the same output.
// Without the file (TMPDIR missing), the directory's attempts are held.
func TestFlowsSeriesHandedOn(t *testing.T) {
	paths, err := filepath.Glob(fixture("captures/rotated/*.pcap"))
	if err != nil || len(paths) != 6 {
		t.Fatalf("%v %v", paths, err)
	}
	for _, output := range []string{"csv", "json", "table"} {
		if !handOnFlows(paths, output, "", "", anonymizeOptions{}, false) {
			t.Fatalf("the series' files are not written as they are read (-o %s)", output)
		}
	}
	dir := fixture("captures/rotated")
	if !handOnFlows([]string{dir}, "csv", "", "", anonymizeOptions{}, false) || handOnFlows([]string{dir}, "json", "", "", anonymizeOptions{}, false) ||
		!handOnFlows([]string{dir}, "json", "", "", anonymizeOptions{}, true) {
		t.Fatal("a directory is written as it is read in the CSV form, and in the others with a temporary file alone")
	}
	for _, args := range [][]string{{"-o", "csv"}, {"-o", "json"}, {"--width", "80"}, {"--width", "0"}} {
		code, handed, stderr := runCLI(t, append(append([]string{"flows"}, args...), paths...)...)
		_, held, _ := runCLI(t, append(append([]string{"flows", "--since", "+0s"}, args...), paths...)...)
		if code != exitOK || handed != held {
			t.Errorf("flows %s of the series: exit %d, stderr %q, output\n%s\nwant, every attempt held,\n%s", args, code, stderr, handed, held)
		}
		if rows := strings.Count(handed, "\n"); args[1] == "csv" && rows != 12 {
			t.Errorf("flows -o csv of the series: %d lines, want a header and the 11 attempts tshark sees", rows)
		}
	}
	for _, args := range [][]string{{"-o", "csv"}, {"-o", "json"}, {"--width", "80"}, {"--width", "0"}} {
		_, files, _ := runCLI(t, append(append([]string{"flows"}, args...), paths...)...)
		_, held, _ := runCLI(t, append(append([]string{"flows", "--since", "+0s"}, args...), dir)...)
		for _, tmp := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
			t.Setenv("TMPDIR", tmp)
			if code, out, stderr := runCLI(t, append(append([]string{"flows"}, args...), dir)...); code != exitOK || out != files || out != held {
				t.Errorf("flows %s of the series' directory, TMPDIR %s: exit %d, stderr %q, output\n%s\nof its files:\n%s\nevery attempt held:\n%s",
					args, tmp, code, stderr, out, files, held)
			}
		}
	}
}

// Standard input is read once in every form: as it is read in the CSV
// form, and into the temporary file in the others, whose tables only
// tablewriter writes (a text capture's at 80 columns) are built from the
// attempts the file kept. Each gives, exit code and warnings included,
// what flows writes holding every attempt, as it does without the file
// (TMPDIR missing).
func TestFlowsStdinHandedOn(t *testing.T) {
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	if err := tw.AddFS(os.DirFS(fixture("captures/rotated"))); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{"the rotated series, archived": archive.Bytes()}
	for _, name := range []string{"captures/handshakes.pcap", "captures/text/handshakes.tshark.txt"} {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	kept := 0
	runTestHook = func(point string) {
		if point == "kept" {
			kept++
		}
	}
	t.Cleanup(func() { runTestHook = nil })
	for name, data := range inputs {
		for _, args := range [][]string{{"-o", "csv"}, {"-o", "json"}, {"--width", "80"}, {"--width", "0"}, {"--width", "30"}} {
			var outs [2]string
			for i, tmp := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
				t.Setenv("TMPDIR", tmp)
				withStdin(t, bytes.NewReader(data))
				before := kept
				code, stdout, stderr := runCLI(t, append(append([]string{"flows"}, args...), "-")...)
				if code != exitOK || strings.Contains(stderr, "internal error") {
					t.Errorf("%s, flows %s on stdin, TMPDIR %s: exit %d, stderr %q", name, args, tmp, code, stderr)
				}
				if k := kept - before; (i == 0 && args[1] != "csv") != (k == 1) {
					t.Errorf("%s, flows %s on stdin, TMPDIR %s: kept in a temporary file %d times", name, args, tmp, k)
				}
				outs[i] = fmt.Sprintf("exit %d\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if outs[0] != outs[1] {
				t.Errorf("%s, flows %s on stdin, read once:\n%s\nevery attempt held:\n%s", name, args, outs[0], outs[1])
			}
			if !strings.Contains(outs[0], "frame=") && !strings.Contains(outs[0], `"frame": `) && !strings.Contains(outs[0], "│ #") &&
				!strings.Contains(outs[0], ":1") {
				t.Errorf("%s, flows %s on stdin: no attempt written:\n%s", name, args, outs[0])
			}
		}
	}
}
