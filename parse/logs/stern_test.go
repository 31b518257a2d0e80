package logs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// stern's "<pod> <container> <line>" as pasted in kubernetes#71305
// (fixtures/field): the klog line read with its Pod and container, the
// iptables message's second line continuing it.
func TestSternReal(t *testing.T) {
	rel := "fixtures/field/iptables-version-skew--k8s-issue-71305/kube-proxy.log"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	if s := KlogFormat.Sniff(rel, b); s == 0 {
		t.Errorf("klog sniffs stern's output %d", s)
	}
	evs, err := readReal(t, rel)
	if err != nil {
		t.Error(err)
	}
	want := `1 0000-11-20T07:08:50.482693Z E kube-proxy@ /kube-proxy-7xq4d/kube-proxy  "Failed to ensure that nat chain KUBE-SERVICES exists: error creating chain \"KUBE-SERVICES\": exit status 3: iptables v1.6.0: can't initialize iptables table ` + "`nat'" + `: Table does not exist (do you need to insmod?)\nPerhaps iptables or your kernel needs to be upgraded."`
	if len(evs) != 1 || containerLine(evs[0]) != want {
		for _, ev := range evs {
			t.Log(containerLine(ev))
		}
		t.Fatalf("%d events, want\n%s", len(evs), want)
	}
	// Two words of prose before a klog-looking line are not names.
	lr := newLogReader("x.log", "", "", nil)
	for _, line := range []string{"Sep 15 I0915 19:09:04.534948 1 a.go:1] x", "node1 kubelet I0915 19:09:04.534948 1 a.go:1] x",
		"kube-proxy-7xq4d kube-proxy Perhaps iptables or your kernel needs to be upgraded."} {
		if w, ok := lr.unwrapStern(line); ok {
			t.Errorf("%q read as stern's %+v", line, w)
		}
	}
}

func FuzzStern(f *testing.F) {
	f.Add("kube-proxy-7xq4d kube-proxy E1120 07:08:50.482693       1 proxier.go:647] Failed\nkube-proxy-7xq4d kube-proxy Perhaps\n")
	f.Add(`coredns-5d78c9869d-4xk2p coredns {"level":"info","msg":"x"}` + "\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, KlogFormat, in) })
}
