package bundle_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testformats"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
)

func open(t *testing.T, path string, opts *parse.Options) (*model.Snapshot, model.ErrorList) {
	t.Helper()
	if opts == nil {
		opts = &parse.Options{}
	}
	if opts.Formats == nil {
		opts.Formats = testformats.All()
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	snap, warns, err := parse.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return snap, warns
}

// inputs indexes inputs by their path relative to prefix.
func inputs(snap *model.Snapshot, prefix string) map[string]model.Input {
	out := map[string]model.Input{}
	for _, in := range snap.Inputs {
		out[filepath.ToSlash(strings.TrimPrefix(in.Path, prefix))] = in
	}
	return out
}

// treeWant is what the layout must say of one file of the committed trees.
type treeWant struct {
	path, format, node, layout, command string
	empty                               bool // the command printed no records
}

// layoutTrees are the trees built by testdata/bundles/make-trees.sh from
// real command outputs.
var layoutTrees = []treeWant{
	// sosreport of node-a: node from the hostname file, command from the
	// mangled file name, a namespace's files as a node of their own, kubectl
	// output cluster-wide (no node).
	{"sosreport-node-a-2026-11-22-nmbdlaa/hostname", "", "node-a", "sosreport", "", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/firewall_tables/iptables-save", "test-iptables-save", "node-a", "sosreport", "iptables-save", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/firewall_tables/iptables_-vnxL", "test-iptables-list", "node-a", "sosreport", "iptables -vnxL", true},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/firewall_tables/nft_list_ruleset", "test-nft", "node-a", "sosreport", "nft list ruleset", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/kernel/sysctl_-a", "test-sysctl", "node-a", "sosreport", "sysctl -a", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/kubernetes/kubectl_--kubeconfig_.etc.kubernetes.admin.conf_get_-o_json_services", "test-kube-json", "", "sosreport", "kubectl get -o json services", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/ip_-d_address", "test-ip-addr", "node-a", "sosreport", "ip -d address", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/ip_route_show_table_all", "test-ip-route", "node-a", "sosreport", "ip route show table all", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/namespaces/nm-bdl-b/ip_netns_exec_nm-bdl-b_iptables-save", "test-iptables-save", "node-a/netns/nm-bdl-b", "sosreport", "ip netns exec nm-bdl-b iptables-save", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/namespaces/nm-bdl-b/ip_netns_exec_nm-bdl-b_ss_-peaonmi", "test-ss", "node-a/netns/nm-bdl-b", "sosreport", "ip netns exec nm-bdl-b ss -peaonmi", false},
	{"sosreport-node-a-2026-11-22-nmbdlaa/sos_commands/networking/ss_-peaonmi", "test-ss", "node-a", "sosreport", "ss -peaonmi", false},
	// Rancher logs collector of node-b: node from systeminfo/hostname.
	{"node-b-2026-11-22_10_11_12/k3s/kubectl/services.json", "test-kube-json", "", "rancher", "kubectl get services --all-namespaces -o json", false},
	{"node-b-2026-11-22_10_11_12/networking/ipaddrshow", "test-ip-addr", "node-b", "rancher", "ip addr show", false},
	{"node-b-2026-11-22_10_11_12/networking/iproute", "test-ip-route", "node-b", "rancher", "ip route show table all", false},
	{"node-b-2026-11-22_10_11_12/networking/iptablesnat", "test-iptables-list", "node-b", "rancher", "iptables --wait 1 --numeric --verbose --list --table nat", false},
	{"node-b-2026-11-22_10_11_12/networking/iptablessave", "test-iptables-save", "node-b", "rancher", "iptables-save", false},
	{"node-b-2026-11-22_10_11_12/networking/ssanp", "test-ss", "node-b", "rancher", "ss -anp", false},
	{"node-b-2026-11-22_10_11_12/systeminfo/hostname", "", "node-b", "rancher", "hostname", false},
	{"node-b-2026-11-22_10_11_12/systeminfo/sysctla", "test-sysctl", "node-b", "rancher", "sysctl -a", false},
	// EKS log collector: node from system/instance-id.txt.
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/networking/iproute.txt", "test-ip-route", "i-0nmbdl0000000000a", "eks", "ip route show table all", false},
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/networking/iprule.txt", "", "i-0nmbdl0000000000a", "eks", "ip rule show", false},
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/networking/iptables-nat.txt", "test-iptables-list", "i-0nmbdl0000000000a", "eks", "iptables --wait 1 --numeric --verbose --list --table nat", false},
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/networking/iptables-save.txt", "test-iptables-save", "i-0nmbdl0000000000a", "eks", "iptables-save", false},
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/sysctls/sysctl_all.txt", "test-sysctl", "i-0nmbdl0000000000a", "eks", "sysctl --all", false},
	{"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/system/instance-id.txt", "", "i-0nmbdl0000000000a", "eks", "cat /var/lib/cloud/data/instance-id", false},
	// A loose file beside the trees belongs to no layout and no node.
	{"kubectl-services.json", "test-kube-json", "", "", "", false},
	{"make-trees.sh", "", "", "", "", false},
}

func checkTrees(t *testing.T, snap *model.Snapshot, prefix string) {
	t.Helper()
	got := inputs(snap, prefix)
	if len(got) != len(layoutTrees) {
		var names []string
		for p := range got {
			names = append(names, p)
		}
		sort.Strings(names)
		t.Errorf("got %d inputs, want %d: %q", len(got), len(layoutTrees), names)
	}
	for _, w := range layoutTrees {
		in, ok := got[w.path]
		if !ok {
			t.Errorf("%s: not listed among the inputs", w.path)
			continue
		}
		if in.Format != w.format || in.Node != w.node || in.Layout != w.layout || in.Command != w.command {
			t.Errorf("%s:\n got  format=%q node=%q layout=%q command=%q\n want format=%q node=%q layout=%q command=%q",
				w.path, in.Format, in.Node, in.Layout, in.Command, w.format, w.node, w.layout, w.command)
		}
		if w.format != "" && !w.empty && in.Records == 0 {
			t.Errorf("%s: no records read", w.path)
		}
	}
	// Every record carries the node of the file it came from.
	nodeOf := map[string]string{}
	for _, in := range snap.Inputs {
		nodeOf[in.Path] = in.Node
	}
	for _, sc := range snap.Sysctls {
		if sc.Node != nodeOf[sc.Pos.File] || sc.Node == "" {
			t.Errorf("sysctl %s at %s: node %q, its file's node %q", sc.Name, sc.Pos, sc.Node, nodeOf[sc.Pos.File])
		}
	}
	for _, so := range snap.Sockets {
		if so.Node != nodeOf[so.Pos.File] || so.Node == "" {
			t.Errorf("socket at %s: node %q, its file's node %q", so.Pos, so.Node, nodeOf[so.Pos.File])
		}
	}
	for _, rs := range snap.Netfilter {
		if rs.Node != nodeOf[rs.Pos.File] || rs.Node == "" {
			t.Errorf("ruleset at %s: node %q, its file's node %q", rs.Pos, rs.Node, nodeOf[rs.Pos.File])
		}
	}
}

func TestLayoutTreesDirectory(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	snap, warns := open(t, dir, nil)
	checkTrees(t, snap, dir+string(filepath.Separator))
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	// The EKS collector's "=======" / "Total Number of Rules: N" trailer is
	// read as blank lines: the stand-in parser counts only rule lines, so
	// the trailer must not have reached it as one.
	got := inputs(snap, dir+string(filepath.Separator))
	eks := got["eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/networking/iptables-nat.txt"]
	rancher := got["node-b-2026-11-22_10_11_12/networking/iptablesnat"]
	if eks.Records != rancher.Records {
		t.Errorf("EKS nat listing: %d rule lines, the same listing without the collector's trailer has %d", eks.Records, rancher.Records)
	}
	if want := 4; len(snap.Nodes()) != want {
		t.Errorf("nodes %q, want %d (node-a, its namespace nm-bdl-b, node-b, the EKS instance)", snap.Nodes(), want)
	}
}

// archiveTree writes the files under dir into an archive at dst: format is
// tar, tar.gz, tar.xz or zip.
func archiveTree(t *testing.T, dir, dst, format string) {
	t.Helper()
	var buf bytes.Buffer
	switch format {
	case "zip":
		zw := zip.NewWriter(&buf)
		walkFiles(t, dir, func(rel string, b []byte) {
			w, err := zw.Create(rel)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		})
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		tw := tar.NewWriter(&buf)
		walkFiles(t, dir, func(rel string, b []byte) {
			tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
			tw.Write(b)
		})
		tw.Close()
	}
	out := buf.Bytes()
	switch format {
	case "tar.gz":
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(out)
		zw.Close()
		out = z.Bytes()
	case "tar.xz":
		out = xzOf(t, out)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func walkFiles(t *testing.T, dir string, fn func(rel string, b []byte)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fn(filepath.ToSlash(rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayoutTreesArchives(t *testing.T) {
	for _, format := range []string{"tar", "tar.gz", "tar.xz", "zip"} {
		t.Run(format, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "bundle."+format)
			archiveTree(t, filepath.Join(testutil.Root(), "parse", "testdata", "bundles"), dst, format)
			snap, warns := open(t, dst, nil)
			checkTrees(t, snap, dst+"!")
			if len(warns) != 0 {
				t.Errorf("unexpected warnings: %v", warns)
			}
		})
	}
}

// TestNestedArchives reads the trees as a zip inside a tar.gz inside a
// tar, the middle one spilled to a temporary file (MaxMemoryBuffer is
// tiny), and checks the spill is gone afterwards.
func TestNestedArchives(t *testing.T) {
	tmp := t.TempDir()
	inner := filepath.Join(tmp, "inner.zip")
	archiveTree(t, filepath.Join(testutil.Root(), "parse", "testdata", "bundles"), inner, "zip")
	mid := filepath.Join(tmp, "mid")
	os.Mkdir(mid, 0o755)
	os.Rename(inner, filepath.Join(mid, "inner.zip"))
	archiveTree(t, mid, filepath.Join(tmp, "mid.tar.gz"), "tar.gz")
	outer := filepath.Join(tmp, "outer")
	os.Mkdir(outer, 0o755)
	os.Rename(filepath.Join(tmp, "mid.tar.gz"), filepath.Join(outer, "mid.tar.gz"))
	dst := filepath.Join(tmp, "outer.tar")
	archiveTree(t, outer, dst, "tar")

	spill := t.TempDir()
	spilled := 0
	opts := &parse.Options{TempDir: spill, Limits: parse.Limits{MaxMemoryBuffer: 1024}}
	opts.Progress = func(model.Input) {
		if ents, _ := os.ReadDir(spill); len(ents) > spilled {
			spilled = len(ents)
		}
	}
	snap, warns := open(t, dst, opts)
	checkTrees(t, snap, dst+"!mid.tar.gz!inner.zip!")
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	if spilled == 0 {
		t.Error("no nested archive was spilled to TempDir despite MaxMemoryBuffer 1024")
	}
	if ents, _ := os.ReadDir(spill); len(ents) != 0 {
		t.Errorf("TempDir holds %d files after Open: spills not removed", len(ents))
	}

	opts = &parse.Options{Limits: parse.Limits{MaxDepth: 2}}
	snap, warns = open(t, dst, opts)
	if !hasWarning(warns, parse.ErrLimit, dst+"!mid.tar.gz!inner.zip") {
		t.Errorf("MaxDepth 2: want a limit warning on the innermost archive, got %v", warns)
	}
	if n := len(snap.Inputs); n != 1 || snap.Inputs[0].Skipped == "" {
		t.Errorf("MaxDepth 2: want the one skipped nested archive, got %+v", snap.Inputs)
	}
}

func hasWarning(warns model.ErrorList, target error, file string) bool {
	for _, w := range warns {
		if errors.Is(w, target) && w.Pos.File == file {
			return true
		}
	}
	return false
}

type member struct {
	name string
	typ  byte
	link string
	body []byte
}

func writeTar(t *testing.T, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Linkname: m.link, Mode: 0o644, Size: int64(len(m.body))}
		if m.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.body)
	}
	tw.Close()
	return buf.Bytes()
}

func gz(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

const sysctlBody = "net.ipv4.ip_local_port_range = 30000\t60999\nnet.ipv4.ip_local_reserved_ports = \n"

// TestHostileArchive reads an archive built to attack a reader: a member
// climbing out with "..", an absolute member, links pointing outside, a
// gzip bomb, corrupt compressed members. Each is refused or reported, the
// good files are still read, and nothing is written anywhere but the
// temporary directory.
func TestHostileArchive(t *testing.T) {
	// 10 MiB of route lines in about 10 KiB: read until the ratio limit
	// (checked from 8 MiB of output on)
	bomb := gz(bytes.Repeat([]byte("default dev eth0\n"), 10<<20/17))
	garbage := gz([]byte("net.ipv4.tcp_tw_reuse = 2\n"))
	garbage = append(garbage[:12:12], bytes.Repeat([]byte{0xff}, 40)...)
	cut := gz(bytes.Repeat([]byte("net.ipv4.tcp_tw_reuse = 2\n"), 5000))
	cut = cut[:len(cut)/2]
	members := []member{
		{name: "bundle/", typ: tar.TypeDir},
		{name: "bundle/sysctl.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
		{name: "bundle/../../evil.txt", typ: tar.TypeReg, body: []byte("net.ipv4.ip_forward = 1\n")},
		{name: "/tmp/netmortem-absolute.txt", typ: tar.TypeReg, body: []byte("net.ipv4.ip_forward = 1\n")},
		{name: "bundle/passwd", typ: tar.TypeSymlink, link: "../../../etc/passwd"},
		{name: "bundle/abs-link", typ: tar.TypeSymlink, link: "/etc/shadow"},
		{name: "bundle/hard", typ: tar.TypeLink, link: "../outside"},
		{name: "bundle/ok-link", typ: tar.TypeSymlink, link: "sysctl.txt"},
		{name: "bundle/bomb.txt.gz", typ: tar.TypeReg, body: bomb},
		{name: "bundle/garbage.txt.gz", typ: tar.TypeReg, body: garbage},
		{name: "bundle/cut.txt.gz", typ: tar.TypeReg, body: cut},
		{name: "bundle/badheader.gz", typ: tar.TypeReg, body: []byte{0x1f, 0x8b, 0x99, 0x00, 0x01}},
		{name: "bundle/fifo", typ: tar.TypeFifo},
		{name: "bundle/iptables-save.txt", typ: tar.TypeReg, body: []byte("*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n")},
	}
	work := t.TempDir()
	dst := filepath.Join(work, "hostile.tar.gz")
	if err := os.WriteFile(dst, gz(writeTar(t, members)), 0o444); err != nil {
		t.Fatal(err)
	}
	before := sha256File(t, dst)
	spill := t.TempDir()
	wd, _ := os.Getwd()
	snap, warns := open(t, dst, &parse.Options{TempDir: spill, Limits: parse.Limits{MaxRatio: 100}})

	p := func(n string) string { return dst + "!" + n }
	for _, c := range []struct {
		file   string
		target error
		text   string
	}{
		{p("bundle/../../evil.txt"), parse.ErrUnsafePath, `climbs out with ".."`},
		{p("/tmp/netmortem-absolute.txt"), parse.ErrUnsafePath, "absolute member path"},
		{p("bundle/passwd"), parse.ErrUnsafePath, `link to "../../../etc/passwd" refused`},
		{p("bundle/abs-link"), parse.ErrUnsafePath, `link to "/etc/shadow" refused`},
		{p("bundle/hard"), parse.ErrUnsafePath, `link to "../outside" refused`},
		{p("bundle/bomb.txt.gz"), parse.ErrLimit, "100 times the compressed size"},
		{p("bundle/badheader.gz"), nil, "gzip: "},
		{p("bundle/garbage.txt.gz"), nil, "gzip: unexpected EOF: the file is corrupt or cut short"},
		{p("bundle/cut.txt.gz"), nil, "unexpected EOF"},
	} {
		found := false
		for _, w := range warns {
			if w.Pos.File == c.file && strings.Contains(w.Error(), c.text) && (c.target == nil || errors.Is(w, c.target)) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning on %s containing %q (wrapping %v); warnings:\n%v", c.file, c.text, c.target, warnList(warns))
		}
	}
	got := inputs(snap, dst+"!")
	for name, want := range map[string]string{
		"bundle/sysctl.txt":        "test-sysctl",
		"bundle/iptables-save.txt": "test-iptables-save",
		"bundle/cut.txt.gz":        "test-sysctl", // read up to the cut
		"bundle/bomb.txt.gz":       "test-ip-route",
	} {
		if got[name].Format != want || got[name].Records == 0 {
			t.Errorf("%s: read as %q with %d records, want %s", name, got[name].Format, got[name].Records, want)
		}
	}
	if in := got["bundle/ok-link"]; in.Skipped != "link to bundle/sysctl.txt, read there" {
		t.Errorf("link inside the bundle: skipped %q", in.Skipped)
	}
	if in := got["bundle/fifo"]; in.Skipped != "not a regular file" {
		t.Errorf("fifo: skipped %q", in.Skipped)
	}
	for _, sc := range snap.Sysctls {
		if strings.Contains(sc.Pos.File, "evil") || strings.Contains(sc.Pos.File, "absolute") {
			t.Errorf("refused member was parsed: %v", sc.Pos)
		}
	}
	// Nothing was written: not beside the archive, not above it, not in the
	// working directory, not in /tmp; the spill directory is empty; the
	// archive is unchanged.
	for _, f := range []string{filepath.Join(work, "evil.txt"), filepath.Join(filepath.Dir(work), "evil.txt"),
		filepath.Join(wd, "evil.txt"), "/tmp/netmortem-absolute.txt"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists after Open", f)
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) != 1 {
		t.Errorf("the archive's directory holds %d entries, want only the archive", len(ents))
	}
	if ents, _ := os.ReadDir(spill); len(ents) != 0 {
		t.Errorf("TempDir not empty after Open")
	}
	if sha256File(t, dst) != before {
		t.Error("the archive was modified")
	}
}

func warnList(w model.ErrorList) string {
	var b strings.Builder
	for _, e := range w {
		fmt.Fprintf(&b, "\t%v\n", e)
	}
	return b.String()
}

func sha256File(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestTruncatedArchive(t *testing.T) {
	full := gz(writeTar(t, []member{
		{name: "a/sysctl.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
		{name: "a/big.txt", typ: tar.TypeReg, body: bytes.Repeat([]byte("net.core.somaxconn = 4096\n"), 20000)},
	}))
	dst := filepath.Join(t.TempDir(), "cut.tar.gz")
	os.WriteFile(dst, full[:len(full)/2], 0o644)
	snap, warns := open(t, dst, nil)
	if got := inputs(snap, dst+"!")["a/sysctl.txt"]; got.Format != "test-sysctl" || got.Records != 2 {
		t.Errorf("member before the cut: %+v", got)
	}
	found := false
	for _, w := range warns {
		if w.Pos.File == dst && strings.Contains(w.Error(), "archive not read to its end") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning that the archive was cut short: %v", warns)
	}
}

func TestLimits(t *testing.T) {
	body := bytes.Repeat([]byte("net.core.somaxconn = 4096\n"), 40000) // 1 MB
	archive := writeTar(t, []member{
		{name: "b/one.txt", typ: tar.TypeReg, body: body},
		{name: "b/two.txt.gz", typ: tar.TypeReg, body: gz(body)},
		{name: "b/small.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
	})
	dst := filepath.Join(t.TempDir(), "l.tar")
	os.WriteFile(dst, archive, 0o644)

	t.Run("MaxFileBytes", func(t *testing.T) {
		snap, warns := open(t, dst, &parse.Options{Limits: parse.Limits{MaxFileBytes: 512 << 10}})
		got := inputs(snap, dst+"!")
		if !hasWarning(warns, parse.ErrLimit, dst+"!b/one.txt") || got["b/one.txt"].Skipped == "" {
			t.Errorf("member above MaxFileBytes: want a limit warning and a skip, got %+v %v", got["b/one.txt"], warns)
		}
		if !hasWarning(warns, parse.ErrLimit, dst+"!b/two.txt.gz") {
			t.Errorf("compressed member growing past MaxFileBytes: want a limit warning, got %v", warns)
		}
		if in := got["b/two.txt.gz"]; in.Records == 0 || in.Records >= 40000 {
			t.Errorf("compressed member cut at the limit: want the records before the cut, got %d", in.Records)
		}
		if got["b/small.txt"].Records != 2 {
			t.Errorf("the rest was not read: %+v", got["b/small.txt"])
		}
	})
	t.Run("MaxTotalBytes", func(t *testing.T) {
		snap, warns := open(t, dst, &parse.Options{Limits: parse.Limits{MaxTotalBytes: 512 << 10}})
		if !hasWarning(warns, parse.ErrLimit, dst+"!b/two.txt.gz") {
			t.Errorf("want a limit warning on the member that passed MaxTotalBytes, got %v", warns)
		}
		if got := inputs(snap, dst+"!")["b/small.txt"]; got.Records != 2 {
			t.Errorf("an uncompressed member after the limit is still read: %+v", got)
		}
	})
}

func TestRedaction(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sysctl.txt"), []byte(
		"net.ipv4.ip_local_port_range = ***HIDDEN***\n"+
			"net.ipv4.ip_local_reserved_ports = 30000-32767\n"+
			"net.ipv4.conf.all.rp_filter = ***HIDDEN***\n"+
			"kernel.hostname = ***TOKEN_HOSTNAME_9F2A61***\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "svc.json"), []byte(`{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Service","metadata":{"name":"db","namespace":"prod","annotations":{"password":"***HIDDEN***","team":"core"}},
  "spec":{"clusterIP":"***HIDDEN***","externalName":"***TOKEN_HOST_AB12CD***","ports":[{"port":5432}]}}]}`), 0o644)
	snap, warns := open(t, dir, nil)
	var names []string
	for _, sc := range snap.Sysctls {
		names = append(names, sc.Name+"="+sc.Value)
	}
	want := []string{"net.ipv4.ip_local_reserved_ports=30000-32767", "kernel.hostname=***TOKEN_HOSTNAME_9F2A61***"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("sysctls after the redaction pass: %q, want %q", names, want)
	}
	if _, ok := snap.Sysctl("", "net.ipv4.ip_local_port_range"); ok {
		t.Error("a hidden ip_local_port_range is still in the model")
	}
	if len(snap.Kube.Services) != 1 {
		t.Fatalf("services: %d", len(snap.Kube.Services))
	}
	svc := snap.Kube.Services[0]
	if svc.Spec.ClusterIP != "" || svc.Annotations["password"] != "" || svc.Annotations["team"] != "core" {
		t.Errorf("hidden Service fields not cleared: clusterIP %q annotations %v", svc.Spec.ClusterIP, svc.Annotations)
	}
	if _, ok := svc.Annotations["password"]; ok {
		t.Error("a hidden annotation is still present")
	}
	if svc.Spec.ExternalName != "***TOKEN_HOST_AB12CD***" {
		t.Errorf("a tokenized value must be kept as an identity, got %q", svc.Spec.ExternalName)
	}
	wantWarn := map[string]string{
		filepath.Join(dir, "sysctl.txt") + ":1": "2 value(s) hidden by redaction (***HIDDEN***) read as unknown",
		filepath.Join(dir, "svc.json"):          "2 value(s) hidden by redaction (***HIDDEN***) read as unknown",
	}
	for _, w := range warns {
		key := w.Pos.File
		if w.Pos.Line > 0 {
			key = fmt.Sprintf("%s:%d", w.Pos.File, w.Pos.Line)
		}
		if msg, ok := wantWarn[key]; ok && w.Err.Error() == msg {
			delete(wantWarn, key)
		}
	}
	if len(wantWarn) != 0 {
		t.Errorf("missing redaction warnings %v; got:\n%s", wantWarn, warnList(warns))
	}
}

// TestLayoutHint checks that the layout's command settles content two
// formats read equally well, and that content still decides otherwise.
func TestLayoutHint(t *testing.T) {
	sniffTable := func(_ string, head []byte) int {
		if bytes.HasPrefix(head, []byte("Proto Recv-Q")) {
			return 40
		}
		return 0
	}
	parseNothing := func(context.Context, io.Reader, *parse.File, *model.Snapshot) (int, error) { return 1, nil }
	netstat := &parse.Format{Name: "netstat-like", Kind: model.KindSockets, Command: "netstat -tanp", Sniff: sniffTable, Parse: parseNothing}
	other := &parse.Format{Name: "other-like", Kind: model.KindSockets, Command: "othertool --list", Sniff: sniffTable, Parse: parseNothing}
	dir := t.TempDir()
	sos := filepath.Join(dir, "sosreport-n1-2026-01-02-abc")
	os.MkdirAll(filepath.Join(sos, "sos_commands", "networking"), 0o755)
	table := []byte("Proto Recv-Q Send-Q Local Address Foreign Address State\n")
	os.WriteFile(filepath.Join(sos, "sos_commands", "networking", "netstat_-W_-neopa"), table, 0o644)
	os.WriteFile(filepath.Join(sos, "sos_commands", "networking", "othertool_--list"), table, 0o644)
	os.WriteFile(filepath.Join(sos, "sos_commands", "networking", "iptables-save"), table, 0o644)
	for _, formats := range [][]*parse.Format{{netstat, other}, {other, netstat}} {
		snap, _ := open(t, dir, &parse.Options{Formats: formats})
		got := inputs(snap, sos+string(filepath.Separator))
		for file, want := range map[string]string{
			"sos_commands/networking/netstat_-W_-neopa": "netstat-like",
			"sos_commands/networking/othertool_--list":  "other-like",
			// no candidate runs iptables-save: the first of the tie wins,
			// as without a layout
			"sos_commands/networking/iptables-save": formats[0].Name,
		} {
			if got[file].Format != want {
				t.Errorf("formats %s,%s: %s read as %q, want %q", formats[0].Name, formats[1].Name, file, got[file].Format, want)
			}
			if got[file].Node != "n1" {
				t.Errorf("%s: node %q, want n1 (from the directory name)", file, got[file].Node)
			}
		}
	}
}

func TestClusterInfoDumpAndMustGather(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	pods := `{"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kube-proxy-abc","namespace":"kube-system"},"spec":{"nodeName":"worker-2"}}]}`
	write("dump/nodes.json", `{"apiVersion":"v1","kind":"NodeList","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"worker-2"}}]}`)
	write("dump/kube-system/pods.json", pods)
	write("dump/kube-system/services.json", `{"apiVersion":"v1","kind":"ServiceList","items":[]}`)
	write("dump/kube-system/kube-proxy-abc/logs.txt", "I0101 00:00:00.000000       1 server.go:1] starting\n")
	write("mg/quay-io-image/timestamp", "2026-01-01\n")
	write("mg/quay-io-image/namespaces/kube-system/pods/kube-proxy-xyz/kube-proxy-xyz.yaml",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-proxy-xyz\n  namespace: kube-system\nspec:\n  nodeName: master-0\n")
	write("mg/quay-io-image/namespaces/kube-system/pods/kube-proxy-xyz/kube-proxy/kube-proxy/logs/current.log", "2026-01-01T00:00:00Z I0101 starting\n")
	write("mg/quay-io-image/cluster-scoped-resources/core/nodes/master-0.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: master-0\n")
	snap, _ := open(t, dir, nil)
	got := inputs(snap, dir+string(filepath.Separator))
	for file, want := range map[string][3]string{
		"dump/kube-system/kube-proxy-abc/logs.txt": {"cluster-info-dump", "worker-2", "kubectl logs -n kube-system kube-proxy-abc"},
		"dump/kube-system/pods.json":               {"cluster-info-dump", "", "kubectl cluster-info dump: kubectl get pods -n kube-system -o json"},
		"mg/quay-io-image/namespaces/kube-system/pods/kube-proxy-xyz/kube-proxy/kube-proxy/logs/current.log": {"must-gather", "master-0", "oc logs -n kube-system kube-proxy-xyz"},
		"mg/quay-io-image/cluster-scoped-resources/core/nodes/master-0.yaml":                                 {"must-gather", "", "oc get -o yaml"},
	} {
		in := got[filepath.FromSlash(file)]
		if in.Layout != want[0] || in.Node != want[1] || in.Command != want[2] {
			t.Errorf("%s: layout %q node %q command %q, want %q", file, in.Layout, in.Node, in.Command, want)
		}
	}
}

func TestTroubleshootBundles(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "support-bundles")
	t.Run("k3d-1.24.4", func(t *testing.T) {
		p := filepath.Join(dir, "troubleshoot_testdata_support-bundle_k3d-1.24.4.tar.gz")
		snap, warns := open(t, p, nil)
		if len(warns) != 0 {
			t.Errorf("unexpected warnings: %v", warns)
		}
		logs := 0
		for _, in := range snap.Inputs {
			rel := strings.TrimPrefix(in.Path, p+"!support-bundle/")
			if in.Layout != bundle.LayoutTroubleshoot {
				t.Errorf("%s: layout %q", rel, in.Layout)
			}
			switch {
			case strings.HasPrefix(rel, "cluster-resources/pods/logs/"):
				// every pod of this single-node k3d cluster runs on its
				// server node, as pods/<ns>.json says (static-hi is not in
				// the pod list: the cluster's only node ran it)
				logs++
				if in.Node != "k3d-mycluster-server-0" || !strings.HasPrefix(in.Command, "kubectl logs -n ") {
					t.Errorf("%s: node %q command %q", rel, in.Node, in.Command)
				}
			case strings.HasPrefix(rel, "all-logs/") || rel == "static-hi.log":
				// links to the pod logs, read once where they point
				if !strings.HasPrefix(in.Skipped, "link to support-bundle/cluster-resources/pods/logs/") {
					t.Errorf("%s: skipped %q", rel, in.Skipped)
				}
			case strings.HasPrefix(rel, "cluster-resources/services/"):
				if in.Node != "" || in.Format != "test-kube-json" || in.Command != "kubectl get services -n "+strings.TrimSuffix(filepath.Base(rel), ".json")+" -o json" {
					t.Errorf("%s: %+v", rel, in)
				}
			}
		}
		if logs < 10 {
			t.Errorf("only %d pod log files found", logs)
		}
		if len(snap.Kube.Services) == 0 {
			t.Error("no Service read")
		}
	})
	t.Run("k3s-1.31.2", func(t *testing.T) {
		p := filepath.Join(dir, "troubleshoot_test-baselines_supportbundle_k3s-1.31.2_baseline.tar.gz")
		snap, warns := open(t, p, nil)
		got := inputs(snap, p+"!supportbundle/")
		if in := got["sysctl/primary-node"]; in.Node != "primary-node" || in.Format != "test-sysctl" || in.Records == 0 {
			t.Errorf("sysctl/primary-node: %+v", in)
		}
		if in := got["run-daemonset-example/primary-node.log"]; in.Node != "primary-node" {
			t.Errorf("a file named after a node: node %q", in.Node)
		}
		for _, sc := range snap.Sysctls {
			if sc.Node != "primary-node" {
				t.Errorf("sysctl %s: node %q", sc.Name, sc.Node)
			}
		}
		// the collectors' error lists are warnings at their lines
		want := []string{
			p + "!supportbundle/collector-errors/sonobuoy-error.json:1: collector error: sonobuoy pod sonobuoy in namespace sonobuoy not found",
			p + "!supportbundle/helm/errors.json:2: collector error: release: not found",
			p + `!supportbundle/secrets-errors/default/example-secret.json:2: collector error: secrets "example-secret" not found`,
		}
		var have []string
		for _, w := range warns {
			have = append(have, w.Error())
		}
		for _, w := range want {
			if !contains(have, w) {
				t.Errorf("missing warning %q; got:\n%s", w, strings.Join(have, "\n"))
			}
		}
		if in := got["helm/errors.json"]; in.Format != "collector-errors" || in.Records != 1 {
			t.Errorf("helm/errors.json: %+v", in)
		}
	})
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestOpenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := parse.Open(ctx, filepath.Join(testutil.Root(), "parse", "testdata", "bundles"), &parse.Options{Formats: testformats.All()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a canceled context: err %v", err)
	}
}

// A file the run was cut short before (interrupted, or out of time) is
// skipped as not read, not as empty: its first read gave no byte because
// of the context, not because it has none. An empty file is still empty.
func TestOpenCanceledBeforeFirstByte(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "full.log"), filepath.Join(dir, "empty.log")
	if err := os.WriteFile(full, []byte("line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		path string
		want string
	}{
		{ctx, full, "not read: the run was cut short before it"},
		{context.Background(), empty, "empty file"},
	} {
		snap, _, _ := parse.Open(tc.ctx, tc.path, &parse.Options{Formats: testformats.All()})
		if snap == nil || len(snap.Inputs) != 1 || snap.Inputs[0].Skipped != tc.want {
			var inputs []model.Input
			if snap != nil {
				inputs = snap.Inputs
			}
			t.Errorf("%s: inputs %+v, want one skipped as %q", tc.path, inputs, tc.want)
		}
	}
}

func TestOpenMissing(t *testing.T) {
	_, _, err := parse.Open(context.Background(), filepath.Join(t.TempDir(), "nope.tar.gz"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing path: err %v", err)
	}
}

func BenchmarkOpenTrees(b *testing.B) {
	dst := filepath.Join(b.TempDir(), "trees.tar.gz")
	t := &testing.T{}
	archiveTree(t, filepath.Join(testutil.Root(), "parse", "testdata", "bundles"), dst, "tar.gz")
	opts := &parse.Options{Formats: testformats.All()}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := parse.Open(context.Background(), dst, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzOpenArchive(f *testing.F) {
	t := &testing.T{}
	f.Add(gz(writeTar(t, []member{{name: "a/sysctl.txt", typ: tar.TypeReg, body: []byte(sysctlBody)}})))
	f.Add(writeTar(t, []member{{name: "../x", typ: tar.TypeReg, body: []byte("x")}, {name: "l", typ: tar.TypeSymlink, link: "/etc"}}))
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("sos_commands/kernel/sysctl_-a")
	w.Write([]byte(sysctlBody))
	zw.Close()
	f.Add(z.Bytes())
	f.Add([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4, 0xe6, 0xd6, 0xb4, 0x46, 2, 0, 0x21, 1, 0x16, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "in")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := &parse.Options{Formats: testformats.All(), TempDir: dir, Limits: parse.Limits{MaxTotalBytes: 64 << 20, MaxMemoryBuffer: 1 << 20}}
		snap, _, err := parse.Open(context.Background(), p, opts)
		if err != nil || snap == nil {
			t.Fatalf("Open: %v", err)
		}
	})
}
