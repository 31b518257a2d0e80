package kube

import (
	"strconv"
	"strings"
	"testing"
)

func TestComponentFlags(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // "component: flag=value@line:col" per arg
		wantErr string
	}{{
		name: "seed 002: the apiserver flag pasted alone",
		in:   "--service-node-port-range=20000-40000\n",
		want: []string{"kube-apiserver: service-node-port-range=20000-40000@1:0"},
	}, {
		name: "binary line, then flags with backslashes (systemd ExecStart)",
		in:   "ExecStart=/usr/local/bin/kube-proxy \\\n  --proxy-mode=ipvs \\\n  --cluster-cidr 10.42.0.0/16\n",
		want: []string{"kube-proxy: proxy-mode=ipvs@2:0", "kube-proxy: cluster-cidr=10.42.0.0/16@3:0"},
	}, {
		name: "ps auxww line",
		in:   "root       880  3.1  9.8 1234 5678 ?  Ssl  Feb07 1:02 kube-apiserver --advertise-address=10.10.1.144 --service-node-port-range=30000-32767 --secure-port=6443\n",
		want: []string{
			"kube-apiserver: advertise-address=10.10.1.144@1:70",
			"kube-apiserver: service-node-port-range=30000-32767@1:102",
			"kube-apiserver: secure-port=6443@1:140",
		},
	}, {
		name: "hyperkube names its component",
		in:   "/hyperkube kubelet --cluster-dns=10.43.0.10 --max-pods=110\n",
		want: []string{"kubelet: cluster-dns=10.43.0.10@1:20", "kubelet: max-pods=110@1:45"},
	}, {
		name: "YAML list items and quoted values; unknown component",
		in:   "- --v=2\n- --feature-gates=\"A=true\"\n",
		want: []string{"unknown: v=2@1:0", "unknown: feature-gates=A=true@2:0"},
	}, {
		name: "a blank line separates components",
		in:   "--etcd-servers=https://127.0.0.1:2379\n\n--proxy-mode=iptables\n",
		want: []string{"kube-apiserver: etcd-servers=https://127.0.0.1:2379@1:0", "kube-proxy: proxy-mode=iptables@3:0"},
	}, {
		name:    "a line that is not a flag",
		in:      "--service-node-port-range=20000-40000\nhello world\n",
		want:    []string{"kube-apiserver: service-node-port-range=20000-40000@1:0"},
		wantErr: `flags.txt:2: syntax error: expected a command-line flag (--name=value) or a component command line ("hello world")`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comps, err := ComponentFlags(strings.NewReader(tt.in), "flags.txt")
			var got []string
			for _, c := range comps {
				for _, a := range c.Args {
					got = append(got, c.Name+": "+a.Name+"="+a.Value+"@"+strconv.Itoa(a.Pos.Line)+":"+strconv.Itoa(a.Pos.Col))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("error %q, want %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestSniffComponentFlags(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"--service-node-port-range=20000-40000\n", true},
		{"kube-apiserver --secure-port=6443 --etcd-servers=x\n", true},
		{"net.ipv4.ip_local_port_range = 1024 65000\n", false},
		{"TCP 169.254.20.10:20869 rr\n", false},
		{"apiVersion: v1\nkind: Pod\n", false},
		{"Chain KUBE-SERVICES (2 references)\n", false},
	}
	for _, tt := range tests {
		if got := sniffComponentFlags("x", []byte(tt.in)) > 0; got != tt.want {
			t.Errorf("sniff(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzComponentFlags(f *testing.F) {
	f.Add("--service-node-port-range=20000-40000\n")
	f.Add("/hyperkube kube-proxy --proxy-mode=ipvs \\\n --x y\n")
	f.Add("- --a\n--b=\"c\n")
	f.Fuzz(func(t *testing.T, in string) {
		comps, _ := ComponentFlags(strings.NewReader(in), "f")
		for _, c := range comps {
			if c.Name == "" {
				t.Fatalf("component without a name: %+v", c)
			}
			for _, a := range c.Args {
				if a.Pos.Line < 1 {
					t.Fatalf("arg without a line: %+v", a)
				}
			}
		}
	})
}
