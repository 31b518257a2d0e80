package bundle

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ulikunitz/xz"
)

func TestSOSCommand(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"ss_-peaonmi", "ss -peaonmi"},
		{"iptables-save", "iptables-save"},
		{"ip_-d_address", "ip -d address"},
		{"sysctl_-a", "sysctl -a"},
		{"ipvsadm_-Ln", "ipvsadm -Ln"},
		{"kubectl_--kubeconfig_.etc.kubernetes.admin.conf_get_pods_--all-namespaces_-o_json", "kubectl get pods --all-namespaces -o json"},
		{"kubectl_--kubeconfig=.etc.kubernetes.admin.conf_get_-o_json_services", "kubectl get -o json services"},
		{"ip_netns_exec_cni-1a2b_iptables-save", "ip netns exec cni-1a2b iptables-save"},
		{"nft_-a_list_ruleset", "nft -a list ruleset"},
	} {
		if got := SOSCommand(c.file); got != c.want {
			t.Errorf("SOSCommand(%q) = %q, want %q", c.file, got, c.want)
		}
	}
}

func TestCleanMember(t *testing.T) {
	for _, c := range []struct {
		name, want string
		unsafe     bool
	}{
		{"a/b.txt", "a/b.txt", false},
		{"./a/./b.txt", "a/b.txt", false},
		{"./", "", false},
		{"a/../../b", "a/../../b", true},
		{"../b", "../b", true},
		{"/etc/passwd", "/etc/passwd", true},
		{"C:/windows/x", "C:/windows/x", true},
		{"a/..b/c", "a/..b/c", false},
	} {
		got, err := cleanMember(c.name)
		if got != c.want || (err != nil) != c.unsafe {
			t.Errorf("cleanMember(%q) = %q, %v; want %q, unsafe %v", c.name, got, err, c.want, c.unsafe)
		}
		if err != nil && !errors.Is(err, ErrUnsafePath) {
			t.Errorf("cleanMember(%q): error %v does not wrap ErrUnsafePath", c.name, err)
		}
	}
}

func TestLinkTarget(t *testing.T) {
	for _, c := range []struct {
		name, link string
		hard       bool
		want       string
		inside     bool
	}{
		{"b/all-logs/x/y.log", "../../cluster-resources/pods/logs/y.log", false, "b/cluster-resources/pods/logs/y.log", true},
		{"b/x", "../../etc/passwd", false, "../etc/passwd", false},
		{"b/x", "/etc/passwd", false, "/etc/passwd", false},
		{"b/x", "b/y", true, "b/y", true},
		{"b/x", "../y", true, "../y", false},
	} {
		got, inside := linkTarget(c.name, c.link, c.hard)
		if got != c.want || inside != c.inside {
			t.Errorf("linkTarget(%q, %q) = %q, %v; want %q, %v", c.name, c.link, got, inside, c.want, c.inside)
		}
	}
}

func TestCollectorNames(t *testing.T) {
	ix := newIndex()
	for _, c := range []struct{ dir, want string }{
		{"sosreport-worker-1-2024-03-05-abcdef", "worker-1"},
		{"sosreport-worker-1-01234567-2024-03-05-abcdef", "worker-1"},
		{"sosreport-node1.01234567-20180101120000", "node1"},
		{"sosreport-plain", "plain"},
	} {
		if got := sosHost(ix, c.dir, ""); got != c.want {
			t.Errorf("sosHost(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
	if got := rancherHost(ix, "", "/tmp/ip-10-0-0-5-2024-05-06_10_11_12.tar.gz"); got != "ip-10-0-0-5" {
		t.Errorf("rancherHost from the archive name = %q", got)
	}
	if got := eksNode(ix, "", "/x/eks_i-0abc123_2024-01-01_1010-UTC_0.7.3.tar.gz"); got != "i-0abc123" {
		t.Errorf("eksNode from the archive name = %q", got)
	}
}

func TestXZDictSize(t *testing.T) {
	for _, dict := range []int{1 << 20, 8 << 20, 64 << 20} {
		var buf bytes.Buffer
		w, err := xz.WriterConfig{DictCap: dict}.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("net.ipv4.ip_forward = 1\n"))
		w.Close()
		got, ok := xzDictSize(buf.Bytes())
		if !ok || got != int64(dict) {
			t.Errorf("dictionary %d: xzDictSize = %d, %v", dict, got, ok)
		}
	}
	if _, ok := xzDictSize([]byte{0xfd, '7', 'z', 'X', 'Z', 0}); ok {
		t.Error("xzDictSize on a cut header reported a size")
	}
}

func TestRedactedAndToken(t *testing.T) {
	for _, c := range []struct {
		s        string
		redacted bool
		typ      string
		hash     string
	}{
		{"***HIDDEN***", true, "", ""},
		{` "***HIDDEN***" `, true, "", ""},
		{"***HIDDEN***x", false, "", ""},
		{"10.0.0.1", false, "", ""},
		{"***TOKEN_IP_ADDRESS_8F3A2B***", false, "IP_ADDRESS", "8F3A2B"},
		{"***TOKEN_PASSWORD_a1b2***", false, "PASSWORD", "a1b2"},
		{"***TOKEN_***", false, "", ""},
		{"***TOKEN_ip_abc***", false, "", ""},
	} {
		if got := Redacted(c.s); got != c.redacted {
			t.Errorf("Redacted(%q) = %v", c.s, got)
		}
		typ, hash, ok := Token(c.s)
		if typ != c.typ || hash != c.hash || ok != (c.typ != "") {
			t.Errorf("Token(%q) = %q, %q, %v; want %q, %q", c.s, typ, hash, ok, c.typ, c.hash)
		}
	}
}

func TestCompressionOf(t *testing.T) {
	for _, c := range []struct {
		head []byte
		want compression
	}{
		{[]byte{0x1f, 0x8b, 8}, gzipCompression},
		{[]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0}, xzCompression},
		{append([]byte("BZh9"), 0x31, 0x41, 0x59, 0x26, 0x53, 0x59), bzip2Compression},
		{[]byte("BZh9 not bzip2"), noCompression},
		{[]byte{0x28, 0xb5, 0x2f, 0xfd}, zstdCompression},
		{[]byte("*nat\n"), noCompression},
	} {
		if got := compressionOf(c.head); got != c.want {
			t.Errorf("compressionOf(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}

// A container's log under a directory named after its node, in a tree no
// layout claims (kind's exported logs, per-node copies of /var/log).
func TestContainerLogNode(t *testing.T) {
	for p, want := range map[string]string{
		"kind-control-plane/pods/kube-system_kube-scheduler-kind-control-plane_5c1e7a0f93d24b68e1a7c04d2f9b3e81/kube-scheduler/0.log":                "kind-control-plane",
		"node1/var/log/pods/kube-system_kube-proxy-x_0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b/kube-proxy/0.log":                                          "node1",
		"logs/node2/var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4.log": "node2",
		"var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4.log":            "",
		"pods/kube-system_kube-proxy-x_0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b/kube-proxy/0.log":                                                        "",
		"node1/var/log/kube-proxy.log": "",
		"node1/pods/readme.txt":        "",
	} {
		if got := containerLogNode(p); got != want {
			t.Errorf("%s: node %q, want %q", p, got, want)
		}
	}
}
