package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/inspect"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// forgedLine is a finding line of `-o text`; a hostile bundle names its
// files so that it would start a line of the output.
const forgedLine = "ipt.txt:1: error: stale-dnat: forged finding"

// hostileBundle writes a bundle whose file and member names try to forge
// output lines and drive the terminal: a sysctl dump that gives a finding
// and a warning, a file no format reads (a skip line), a capture, and an
// archive whose members have such names too.
func hostileBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b\x1b[2J\n"+forgedLine)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sysctl := "net.ipv4.ip_local_port_range = 30000 60999\nnot a sysctl line\n"
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sysctl\n"+forgedLine+"\x1b]0;title\a.txt", sysctl)
	write("note\x1b[31m\r\u202etxt.exe", "nothing netmortem reads\n")
	pcap, err := os.ReadFile(fixture("captures/handshakes.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	write("cap\r\n"+forgedLine+".pcap", string(pcap))
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{
		"node2/\n/etc/" + forgedLine + "/sysctl.txt": sysctl,
		"node2/\x1b[2Junknown\u2066.bin":             "\x00\x01binary",
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	write("more.tar.gz", tgz.String())
	return dir
}

// checkNoForgery fails when out holds a control character other than
// newlines and tabs, a bidi override (but in JSON and YAML, which keep
// the exact text), or a line that starts with the forged finding.
func checkNoForgery(t *testing.T, what, out string) {
	t.Helper()
	exact := strings.Contains(what, "json") || strings.Contains(what, "yaml")
	if i := strings.IndexFunc(out, func(r rune) bool {
		return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (!exact && (r == 0x202e || r == 0x2066))
	}); i >= 0 {
		t.Errorf("%s: a control character or a bidi override reached the output at byte %d: %q", what, i, out[max(0, i-40):min(len(out), i+40)])
	}
	for i, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " \t│|-`[]0123456789/")
		if strings.HasPrefix(trimmed, "etc/"+forgedLine) || strings.HasPrefix(trimmed, forgedLine) {
			t.Errorf("%s: line %d is forged: %q", what, i+1, line)
		}
	}
}

func TestHostileNamesCLI(t *testing.T) {
	dir := hostileBundle(t)
	for _, format := range []string{"text", "table", "markdown", "sarif", "json", "yaml", "html"} {
		code, out, stderr := runCLI(t, "analyze", "-o", format, dir)
		if code != exitFindings {
			t.Errorf("analyze -o %s: exit %d, want %d; stderr:\n%s", format, code, exitFindings, stderr)
		}
		checkNoForgery(t, "analyze -o "+format+" (stdout)", out)
		checkNoForgery(t, "analyze -o "+format+" (stderr)", stderr)
		if format == "json" {
			var rep struct {
				Inputs []struct {
					Path string `json:"path"`
				} `json:"inputs"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, in := range rep.Inputs {
				found = found || in.Path == filepath.Join(dir, "sysctl\n"+forgedLine+"\x1b]0;title\a.txt")
			}
			if !found {
				t.Errorf("JSON does not keep the exact path: %+v", rep.Inputs)
			}
		}
		if format == "text" {
			want := `b\x1b[2J\n` + forgedLine + `/sysctl\n` + forgedLine + `\x1b]0;title\a.txt:1:0: warning: ephemeral-nodeport-overlap`
			if !strings.Contains(out, want) {
				t.Errorf("text output lacks %q:\n%s", want, out)
			}
			// The skipped files are summed up in one line that names them,
			// escaped, after the reason.
			for _, want := range []string{"skipped 2 files (unrecognized content): ", `note\x1b[31m\r\u202etxt.exe`, `unknown\u2066.bin`} {
				if !strings.Contains(stderr, want) {
					t.Errorf("skip lines lack %q:\n%s", want, stderr)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"inspect", dir},
		{"flows", "-o", "table", dir},
		{"flows", "-o", "csv", dir},
		{"diff", dir, dir},
		{"batch", "-j", "1", dir, filepath.Join(dir, "more.tar.gz")},
	} {
		code, out, stderr := runCLI(t, args...)
		if code == exitUsage || code == exitUnreadable {
			t.Errorf("%s: exit %d; stderr:\n%s", args[0], code, stderr)
		}
		if args[0] != "batch" { // batch writes JSON lines on stdout
			checkNoForgery(t, strings.Join(args[:len(args)-1], " ")+" (stdout)", out)
		}
		checkNoForgery(t, args[0]+" (stderr)", stderr)
		if args[0] == "inspect" && !strings.Contains(out, `more.tar.gz!node2/\n/etc/`+forgedLine+`/sysctl.txt`) {
			t.Errorf("inspect lacks the escaped member name:\n%s", out)
		}
	}
}

// truncatedPcap is a pcap file header cut short: recognized as a capture,
// unreadable.
var truncatedPcap = []byte{0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00}

// TestUnreadableCaptureHeader checks that a capture whose header cannot be
// read is an unreadable input in every command (exit 3, naming it), and
// that the rest of the bundle is still read and analyzed.
func TestUnreadableCaptureHeader(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sysctl.txt"), []byte("net.ipv4.ip_local_port_range = 30000 60999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "node1.pcap")
	if err := os.WriteFile(bad, truncatedPcap, 0o644); err != nil {
		t.Fatal(err)
	}
	ngBad := filepath.Join(t.TempDir(), "cut.pcapng")
	if err := os.WriteFile(ngBad, []byte{0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0x00, 0x00, 0x00, 0x4d, 0x3c}, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "analyze", "-o", "text", dir)
	if code != exitUnreadable || !strings.Contains(stderr, "netmortem analyze: 1 capture could not be read: "+bad) || !strings.Contains(stderr, "read 1 input (0 skipped, 1 unreadable)") ||
		!strings.Contains(stderr, "pcap header") {
		t.Errorf("analyze: exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, "ephemeral-nodeport-overlap") {
		t.Errorf("analyze did not analyze the rest of the bundle:\n%s", out)
	}
	for _, args := range [][]string{
		{"analyze", "-q", ngBad},
		{"flows", "-q", ngBad},
		{"flows", "-q", bad, fixture("captures/handshakes.pcap")},
		{"inspect", dir},
		{"diff", dir, dir},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUnreadable || !strings.Contains(stderr, "could not be read") {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", args, code, exitUnreadable, stderr)
		}
	}
	code, out, _ = runCLI(t, "inspect", "-o", "json", dir)
	var in inspect.Inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil || code != exitUnreadable || len(in.Unreadable) != 1 || in.Unreadable[0] != bad {
		t.Errorf("inspect -o json: exit %d, unreadable %v (%v)", code, in.Unreadable, err)
	}
	res := analyzeBundle(t.Context(), dir, time.Minute, 0, 0)
	if res.Status != statusUnreadable || !strings.Contains(res.Error, bad) || len(res.Findings) != 1 || res.Inputs != 2 {
		t.Errorf("batch: %s (%s), %d findings, %d inputs; want unreadable naming the capture, the sysctl finding kept",
			res.Status, res.Error, len(res.Findings), res.Inputs)
	}
	// A capture with a readable header and no packet is a capture.
	empty := filepath.Join(t.TempDir(), "empty.pcap")
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	if err := os.WriteFile(empty, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "flows", empty); code != exitOK {
		t.Errorf("flows on an empty capture: exit %d: %s", code, stderr)
	}
}

// farFuturePcapng is a pcapng file of one TCP SYN whose timestamp, in
// microseconds since 1970, is in the year 559,444: a corrupt or forged
// capture.
func farFuturePcapng() []byte {
	return testutil.Pcapng([]int64{0}, []testutil.NgRecord{{Micros: uint64(1<<44) * 1e6, Data: synFrame}})
}

// synFrame is an Ethernet frame of a TCP SYN from 10.0.0.1:40000 to
// 10.0.0.2:80, with sequence number 1.
var synFrame = []byte{
	0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00, // Ethernet
	0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, // IPv4
	0x9c, 0x40, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0, // TCP SYN
}

// TestFarFutureTimes reads a real pcapng whose packet is stamped past the
// year 9999: every output is written, the time with its year clamped, and
// one warning says so.
func TestFarFutureTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.pcapng")
	if err := os.WriteFile(path, farFuturePcapng(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "csv", "table"} {
		code, out, stderr := runCLI(t, "flows", "-o", format, path)
		if code != exitOK {
			t.Fatalf("flows -o %s: exit %d: %s", format, code, stderr)
		}
		if !strings.Contains(out, "9999-03-08T09:40:16") || strings.Contains(out, "559444") {
			t.Errorf("flows -o %s: the time is not clamped:\n%s", format, out)
		}
		if strings.Count(stderr, "warning:") != 1 || !strings.Contains(stderr, "outside the years 0-9999") {
			t.Errorf("flows -o %s: want one warning about the time:\n%s", format, stderr)
		}
		if format == "json" {
			var tab struct {
				Captures []struct {
					First time.Time `json:"first"`
				} `json:"captures"`
				Attempts []struct {
					Start time.Time `json:"start"`
				} `json:"attempts"`
			}
			if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Attempts) != 1 || tab.Attempts[0].Start.Year() != 9999 ||
				tab.Captures[0].First.Year() != 9999 {
				t.Errorf("flows -o json: %v: %+v", err, tab)
			}
		}
	}
	for _, format := range []string{"json", "yaml", "text"} {
		if code, _, stderr := runCLI(t, "analyze", "-q", "-o", format, path); code != exitOK && code != exitFindings {
			t.Errorf("analyze -o %s: exit %d: %s", format, code, stderr)
		}
	}
}

// TestFarTimeFromFirst reads a pcapng of 2026 whose SYN/ACK is stamped
// in the year 3000, further from the first packet than the 292 years
// tracker times span: it is read without its time, one warning names its
// frame, and no output shows the 2318 the time once saturated to.
func TestFarTimeFromFirst(t *testing.T) {
	synack := slices.Clone(synFrame)
	copy(synack[26:34], synFrame[30:34]) // addresses swapped
	copy(synack[30:34], synFrame[26:30])
	copy(synack[34:36], synFrame[36:38]) // ports swapped
	copy(synack[36:38], synFrame[34:36])
	synack[45], synack[47] = 2, 0x12 // acks the SYN: a SYN/ACK
	t0 := uint64(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro())
	far := uint64(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	path := filepath.Join(t.TempDir(), "far.pcapng")
	if err := os.WriteFile(path, testutil.Pcapng([]int64{0}, []testutil.NgRecord{{Micros: t0, Data: synFrame}, {Micros: far, Data: synack}}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "csv", "table"} {
		code, out, stderr := runCLI(t, "flows", "-o", format, path)
		if code != exitOK || strings.Count(stderr, "warning:") != 1 ||
			!strings.Contains(stderr, "far.pcapng#frame=2: time 3000-01-01T00:00:00Z lies more than 292 years from the first packet's") {
			t.Errorf("flows -o %s: exit %d, want one warning at frame 2:\n%s", format, code, stderr)
		}
		if !strings.Contains(out, "2026-01-02T03:04:05") || strings.Contains(out, "2318") || strings.Contains(out, "9223372") {
			t.Errorf("flows -o %s: the SYN/ACK's time is not left out:\n%s", format, out)
		}
	}
}

// runWithin runs the CLI and fails the test, instead of hanging it, when
// the command does not end within d.
func runWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	ch := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		c := run(args, &out, &errOut)
		ch <- result{c, out.String(), errOut.String()}
	}()
	select {
	case r := <-ch:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("netmortem %s did not end within %s", strings.Join(args, " "), d)
	}
	return 0, "", ""
}

func TestAnalyzeTimeout(t *testing.T) {
	code, out, stderr := runCLI(t, "analyze", "--timeout", "1ns", "-o", "text", incident)
	if code != exitUnreadable || !strings.Contains(stderr, "the 1ns time budget (--timeout) ran out after") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "synack-reset") {
		t.Errorf("findings from evidence that could not be read in time:\n%s", out)
	}
	if code, _, _ := runCLI(t, "analyze", "--timeout", "-1s", incident); code != exitUsage {
		t.Errorf("negative --timeout: exit %d", code)
	}
	if code, _, stderr := runCLI(t, "analyze", "-q", "--timeout", "0", incident); code != exitFindings {
		t.Errorf("--timeout 0 (no limit): exit %d: %s", code, stderr)
	}
	// The rules run on what was read even when reading used up the budget:
	// a sysctl dump is read, then a capture of 64 GiB (sparse: it takes no
	// disk) of empty packet records, which no machine reads in time.
	dir := t.TempDir()
	sysctl := filepath.Join(dir, "sysctl.txt")
	if err := os.WriteFile(sysctl, []byte("net.ipv4.ip_local_port_range = 30000 60999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.pcap")
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	if err := os.WriteFile(huge, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 64<<30); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, out, stderr = runWithin(t, time.Minute, "analyze", "--timeout", "500ms", "-o", "text", sysctl, huge)
	if code != exitUnreadable || !strings.Contains(out, "ephemeral-nodeport-overlap") ||
		!strings.Contains(stderr, "the 500ms time budget (--timeout) ran out after") ||
		!strings.Contains(stderr, "reading stopped there; the findings cover what was read") ||
		strings.Contains(stderr, "netmortem analyze: context deadline exceeded") {
		t.Errorf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", code, time.Since(start), out, stderr)
	}
}

// TestUsageListsCommands checks that the package documentation's usage
// block and the help list every command.
func TestUsageListsCommands(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//\tnetmortem "); ok {
			documented[strings.Fields(rest)[0]] = true
		}
	}
	_, help, _ := runCLI(t, "help")
	names := commandNames()
	for _, name := range names {
		if !documented[name] {
			t.Errorf("the package documentation's usage lacks %q", name)
		}
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("help lacks %q:\n%s", name, help)
		}
	}
	for name := range documented {
		if !slices.Contains(names, name) {
			t.Errorf("the package documentation lists %q, which is not a command", name)
		}
	}
}

// TestStuckRead checks that a read that does not stop when its context
// ends (blocked in the kernel) is left behind after stopGrace, and that
// analyze then ends with exit 3 and says so.
func TestStuckRead(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	defer func(f func(context.Context, []string, *parse.Options, *operand.Objects, map[string]io.Reader) (*model.Snapshot, model.ErrorList, error), g time.Duration) {
		operand.OpenAll, operand.StopGrace = f, g
	}(operand.OpenAll, operand.StopGrace)
	operand.OpenAll = func(context.Context, []string, *parse.Options, *operand.Objects, map[string]io.Reader) (*model.Snapshot, model.ErrorList, error) {
		<-release // ignores its context, as a blocked read does
		return &model.Snapshot{}, nil, nil
	}
	operand.StopGrace = 50 * time.Millisecond
	start := time.Now()
	code, stdout, stderr := runWithin(t, 30*time.Second, "analyze", "-q", "-o", "json", "--timeout", "20ms", incident)
	if code != exitUnreadable || !strings.Contains(stderr, "reading did not stop within 50ms of its end") || time.Since(start) > 10*time.Second {
		t.Errorf("exit %d after %v: %s", code, time.Since(start), stderr)
	}
	// The path read is named, as left behind.
	var rep struct {
		Inputs []struct{ Path, Skipped string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Inputs) != 1 || rep.Inputs[0].Path != incident ||
		rep.Inputs[0].Skipped != operand.LeftBehind {
		t.Errorf("inputs %+v (%v), want %s left behind", rep.Inputs, err, incident)
	}
	res := analyzeBundle(t.Context(), incident, 20*time.Millisecond, 0, 0)
	if res.Status != statusTimeout {
		t.Errorf("batch: %s (%s), want timeout", res.Status, res.Error)
	}
}
