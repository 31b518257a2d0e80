package timeline

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// fileLine is line n of a file, read plainly.
func fileLine(t *testing.T, name string, n int) string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			return sc.Text()
		}
	}
	t.Fatalf("%s has no line %d", name, n)
	return ""
}

// The quotes of the stale-dnat incident: each cited line as the file has
// it, each cited frame decoded as tcpdump prints it, the same attempt's
// frames as the model has them.
func TestQuotesStaleDNAT(t *testing.T) {
	snap, fs := incident(t, "incidents/stale-dnat")
	qs := Quotes(context.Background(), fs, nil)
	seen := map[model.Pos]bool{}
	var lines, frames int
	for _, q := range qs {
		if seen[q.Pos] {
			t.Errorf("%s quoted twice", q.Pos)
		}
		seen[q.Pos] = true
		switch {
		case q.Pos.Line > 0 && q.Pos.Object == "":
			lines++
			if want := fileLine(t, q.Pos.File, q.Pos.Line); q.Text != want {
				t.Errorf("%s: quoted %q, the file has %q", q.Pos, q.Text, want)
			}
		case q.Pos.Frame > 0:
			frames++
		}
	}
	for _, f := range fs {
		for _, e := range f.Evidence {
			if (e.Line > 0 || e.Frame > 0) && !seen[e.Pos] {
				t.Errorf("evidence %s not quoted", e.Pos)
			}
		}
	}
	if lines == 0 || frames == 0 {
		t.Fatalf("%d lines and %d frames quoted", lines, frames)
	}
	// Every SYN of an attempt to the stale target that the evidence
	// cites reads as that SYN.
	for _, a := range snap.Attempts {
		for _, s := range a.SYN {
			p := a.SegPos(s)
			for _, q := range qs {
				if q.Pos != p {
					continue
				}
				want := strings.ReplaceAll(a.Client.String(), ":", ".") + " > " + strings.ReplaceAll(a.Server.String(), ":", ".") + ": Flags [S], seq "
				if !strings.Contains(q.Text, want) || !strings.HasPrefix(q.Text, s.Time.UTC().Format("2006-01-02 15:04:05.000000")) {
					t.Errorf("%s: %q, want the SYN %q at %v", p, q.Text, want, s.Time)
				}
			}
		}
	}
}

// Positions inside an archive are quoted from its members: the same text
// as from the directory.
func TestQuotesArchive(t *testing.T) {
	_, fs := incident(t, "incidents/stale-dnat")
	plain := map[string]string{}
	for _, q := range Quotes(context.Background(), fs, nil) {
		rel, _ := filepath.Rel(filepath.Join(testutil.Root(), "fixtures", "incidents"), q.Pos.File)
		q.Pos.File = filepath.ToSlash(rel)
		plain[q.Pos.String()] = q.Text
	}
	archive := filepath.Join(t.TempDir(), "bundle.tar.gz")
	writeTarGz(t, archive, filepath.Join(testutil.Root(), "fixtures", "incidents", "stale-dnat"), "stale-dnat")
	_, fs2 := load(t, archive)
	qs := Quotes(context.Background(), fs2, nil)
	if len(qs) != len(plain) {
		t.Errorf("%d quotes from the archive, %d from the directory", len(qs), len(plain))
	}
	for _, q := range qs {
		if !strings.HasPrefix(q.Pos.File, archive+"!") {
			t.Fatalf("position %s not inside the archive", q.Pos)
		}
		q.Pos.File = strings.TrimPrefix(q.Pos.File, archive+"!")
		if want, ok := plain[q.Pos.String()]; !ok || q.Text != want {
			t.Errorf("%s: %q from the archive, %q from the directory", q.Pos, q.Text, want)
		}
	}
}

// Positions that cannot be read again are quoted as such; long lines are
// cut; at most MaxQuotes quotes.
func TestQuotesBad(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.log")
	if err := os.WriteFile(long, []byte("short\n"+strings.Repeat("é", 2000)+"\nlast"), 0o644); err != nil {
		t.Fatal(err)
	}
	notTar := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(notTar, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := []analyzer.Evidence{
		{Pos: model.Pos{File: long, Line: 2}},
		{Pos: model.Pos{File: long, Line: 3}},
		{Pos: model.Pos{File: long, Line: 9}},
		{Pos: model.Pos{File: filepath.Join(dir, "missing.txt"), Line: 1}},
		{Pos: model.Pos{File: notTar + "!member.txt", Line: 1}},
		{Pos: model.Pos{File: long, Frame: 3}},
		{Pos: model.Pos{File: "<stdin>", Line: 1}},
		{Pos: model.Pos{Object: "Service ns/web", Path: "spec.ports[0]"}},
		{Pos: model.Pos{File: long}}, // no line, frame or object: nothing to quote
	}
	qs := Quotes(context.Background(), []analyzer.Finding{{Evidence: ev}}, nil)
	if len(qs) != len(ev)-1 {
		t.Fatalf("%d quotes: %+v", len(qs), qs)
	}
	if q := qs[0].Text; len(q) > MaxQuoteBytes+len("…") || !strings.HasSuffix(q, "…") || !strings.HasPrefix(q, "éé") || strings.ContainsRune(q, '\uFFFD') {
		t.Errorf("long line quoted as %d bytes %.20q…", len(q), q)
	}
	if qs[1].Text != "last" {
		t.Errorf("last line without newline: %q", qs[1].Text)
	}
	for i, want := range []string{"the file ends before it", "no such file", "not a tar or zip archive", "not a pcap or pcapng", "standard input"} {
		if q := qs[i+2].Text; !strings.Contains(q, want) || !strings.HasPrefix(q, "(") {
			t.Errorf("%s: %q, want a note saying %q", qs[i+2].Pos, q, want)
		}
	}
	if q := qs[7].Text; q != "Service ns/web spec.ports[0]" {
		t.Errorf("object position quoted as %q", q)
	}

	var many []analyzer.Evidence
	for i := range MaxQuotes + 10 {
		many = append(many, analyzer.Evidence{Pos: model.Pos{File: long, Line: i + 1}})
	}
	if n := len(Quotes(context.Background(), []analyzer.Finding{{Evidence: many}}, nil)); n != MaxQuotes {
		t.Errorf("%d quotes, bound %d", n, MaxQuotes)
	}
}

// writeTarGz packs dir into a .tar.gz at name, its files under prefix.
func writeTarGz(t *testing.T, name, dir, prefix string) {
	t.Helper()
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: prefix + "/" + e.Name(), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw, out} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Members of an archive inside an archive, and of a zip, are quoted; a
// directory is not a file to quote.
func TestQuotesNested(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.tar.gz")
	logs := filepath.Join(dir, "x")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "app.log"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTarGz(t, inner, logs, "x")
	outer := filepath.Join(dir, "outer.tar.gz")
	only := filepath.Join(dir, "only")
	if err := os.Mkdir(only, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(inner)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(only, "inner.tar.gz"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeTarGz(t, outer, only, "bundle")
	zipName := filepath.Join(dir, "b.zip")
	zf, err := os.Create(zipName)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	w, err := zw.Create("logs/a.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("alpha\nbeta\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	ev := []analyzer.Evidence{
		{Pos: model.Pos{File: outer + "!bundle/inner.tar.gz!x/app.log", Line: 2}},
		{Pos: model.Pos{File: zipName + "!logs/a.log", Line: 2}},
		{Pos: model.Pos{File: zipName + "!logs/missing.log", Line: 1}},
		{Pos: model.Pos{File: dir, Line: 1}},
	}
	qs := Quotes(context.Background(), []analyzer.Finding{{Evidence: ev}}, nil)
	if len(qs) != 4 {
		t.Fatalf("quotes %+v", qs)
	}
	for i, want := range []string{"two", "beta", "(cannot quote line 1: no such member in the archive)", "(cannot quote line 1: not a regular file)"} {
		if qs[i].Text != want {
			t.Errorf("%s: %q, want %q", qs[i].Pos, qs[i].Text, want)
		}
	}
}

// The hostile bundles: every position cited gets a quote with text, and
// nothing panics or hangs. (The decompression bomb is parse's to refuse:
// reading it takes long, and nothing of it is quoted.)
func TestQuotesHostile(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "hostile", "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".go") || strings.Contains(name, "bomb") {
			continue
		}
		n++
		snap, _, _ := parse.Open(context.Background(), name, &parse.Options{Summary: parse.Summary{Enabled: true}})
		res := analyzer.Run(context.Background(), snap, rules.All(), nil)
		// Every warning position too, as if cited.
		fs := append(res.Findings, analyzer.Finding{})
		for _, in := range snap.Inputs {
			fs[len(fs)-1].Evidence = append(fs[len(fs)-1].Evidence, analyzer.Evidence{Pos: model.Pos{File: in.Path, Line: 1}})
		}
		Build(context.Background(), snap, rules.All(), fs)
		for _, q := range Quotes(context.Background(), fs, nil) {
			if q.Text == "" && q.Pos.Line != 1 {
				t.Errorf("%s: empty quote", q.Pos)
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d hostile bundles", n)
	}
}

// The positions a timeline cites (the kube-proxy errors of stale-dnat's
// chart, the frames of its attempts) are quoted too, with the line or
// frame they name, so that the chart's links do not land on an appendix
// entry without its text.
func TestQuotesTimelinePositions(t *testing.T) {
	snap, fs := incident(t, "incidents/stale-dnat")
	tls := Build(context.Background(), snap, rules.All(), fs)
	quoted := map[model.Pos]string{}
	for _, q := range Quotes(context.Background(), fs, tls) {
		quoted[q.Pos] = q.Text
	}
	n := 0
	for _, f := range fs {
		tl := tls[f.Fingerprint]
		if tl == nil {
			continue
		}
		timelinePositions(tl, func(p model.Pos) {
			if p.Line == 0 && p.Frame == 0 {
				return
			}
			n++
			text, ok := quoted[p]
			switch {
			case !ok:
				t.Errorf("%s: %s cited by its timeline is not quoted", f.Rule, p)
			case p.Line > 0 && !strings.Contains(text, "Failed to watch"):
				t.Errorf("%s: %s quoted %q, want its kube-proxy error", f.Rule, p, text)
			}
		})
	}
	if n < 10 {
		t.Errorf("the timelines cite %d lines and frames, want the kube-proxy errors and the attempts", n)
	}
}
