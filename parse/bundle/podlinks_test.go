package bundle_test

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// criLine is one line of a container's log as the CRI writes it.
const criLine = "2026-11-24T10:00:00.000000000Z stdout F listening on :8080\n"

// podLogTree lays out a node's copy as sosreport keeps it: Pod logs under
// var/log/pods, kubelet's absolute links to them under var/log/containers,
// and links that point where the bundle has no file.
type podLogTree struct {
	pods  []string          // files under var/log/pods, relative to the root
	links map[string]string // var/log/containers/NAME -> absolute target
}

var nodeCopy = podLogTree{
	pods: []string{
		"var/log/pods/default_web-0_11111111-2222-3333-4444-555555555555/web/0.log",
		"var/log/pods/default_web-1_66666666-7777-8888-9999-000000000000/web/0.log",
		"var/log/pods/kube-system_coredns-5d78c9869d-4xk2p_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee/coredns/0.log",
	},
	links: map[string]string{
		"web-0_default_web-0123.log":          "/var/log/pods/default_web-0_11111111-2222-3333-4444-555555555555/web/0.log",
		"web-1_default_web-4567.log":          "/var/log/pods/default_web-1_66666666-7777-8888-9999-000000000000/web/0.log",
		"coredns-5d78c9869d-4xk2p_kube.log":   "/var/log/pods/kube-system_coredns-5d78c9869d-4xk2p_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee/coredns/0.log",
		"gone_default_gone-89ab.log":          "/var/log/pods/default_gone_ffffffff-0000-0000-0000-000000000000/gone/0.log",
		"shadow_default_x-cdef.log":           "/etc/shadow",
		"climb_default_x-0000.log":            "/var/log/pods/../../../etc/shadow",
		"pods-dir_default_x-1111.log":         "/var/log/pods/default_web-0_11111111-2222-3333-4444-555555555555/web",
		"relative-outside_default_x-2222.log": "/var/log/containers/../../../../outside.log",
	},
}

// refusedLinks are the links of nodeCopy whose target the bundle does not
// hold as a file under var/log/pods: each is refused with its own warning.
var refusedLinks = []string{
	"climb_default_x-0000.log", "gone_default_gone-89ab.log", "pods-dir_default_x-1111.log",
	"relative-outside_default_x-2222.log", "shadow_default_x-cdef.log",
}

// checkPodLinks checks what Open said of nodeCopy read as rootName under
// prefix (the path of the bundle, separator included), its links directory
// named linkDir in warnings.
func checkPodLinks(t *testing.T, snap *model.Snapshot, warns model.ErrorList, prefix, rootName, linkDir string) {
	t.Helper()
	got := inputs(snap, prefix+rootName+"/")
	for _, p := range nodeCopy.pods {
		if in := got[p]; in.Records != 1 || in.Skipped != "" {
			t.Errorf("%s: %+v, want read with 1 record", p, in)
		}
	}
	for name, target := range nodeCopy.links {
		in := got["var/log/containers/"+name]
		if in.Records != 0 || in.Skipped == "" {
			t.Errorf("link %s was read: %+v", name, in)
		}
		if !slices.Contains(refusedLinks, name) && in.Skipped != "link to "+rootName+target+", read there" {
			t.Errorf("link %s: skipped %q", name, in.Skipped)
		}
	}
	var msgs, refused []string
	for _, w := range warns {
		msgs = append(msgs, w.Error())
		if errors.Is(w, parse.ErrUnsafePath) {
			refused = append(refused, filepath.Base(w.Pos.File))
		}
	}
	slices.Sort(refused)
	if !slices.Equal(refused, refusedLinks) {
		t.Errorf("refused links %q, want %q", refused, refusedLinks)
	}
	want := linkDir + ": 3 links under var/log/containers to files of var/log/pods read there"
	if n := len(warns); n != len(refusedLinks)+1 || !slices.Contains(msgs, want) {
		t.Errorf("%d warnings, want %d with %q:\n%s", n, len(refusedLinks)+1, want, strings.Join(msgs, "\n"))
	}
}

// In a node's copy of its file system (sosreport), kubelet's absolute links
// /var/log/containers/*.log -> /var/log/pods/... name files the bundle
// holds and reads where they are: one line counts them. A link whose
// target the bundle lacks is refused with its own warning, and no link is
// followed out of the bundle.
func TestPodLogLinksDir(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sosreport-node1-2026-11-24-abcdefg")
	for _, p := range nodeCopy.pods {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(criLine), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(root, "var", "log", "containers")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range nodeCopy.links {
		if err := os.Symlink(target, filepath.Join(links, name)); err != nil {
			t.Skip("no symlinks here:", err)
		}
	}
	snap, warns := open(t, dir, &parse.Options{Formats: parse.Formats()})
	checkPodLinks(t, snap, warns, dir+string(filepath.Separator), filepath.Base(root), links)
}

// The same links in a tar archive of the node's copy.
func TestPodLogLinksTar(t *testing.T) {
	var ms []member
	for _, p := range nodeCopy.pods {
		ms = append(ms, member{name: "node1/" + p, typ: tar.TypeReg, body: []byte(criLine)})
	}
	for name, target := range nodeCopy.links {
		ms = append(ms, member{name: "node1/var/log/containers/" + name, typ: tar.TypeSymlink, link: target})
	}
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.name, b.name) })
	dst := writeFile(t, "node1.tar", writeTar(t, ms))
	snap, warns := open(t, dst, &parse.Options{Formats: parse.Formats()})
	checkPodLinks(t, snap, warns, dst+"!", "node1", dst+"!node1/var/log/containers")
}
