package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

func TestContainersSeeds(t *testing.T) {
	for _, name := range []string{
		"000-apiserver-affinity/docker-ps.txt",
		"001-probe-restart-loop/docker-ps-a.txt",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(testutil.Root(), "fixtures", "seeds", name)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := Containers(f, filepath.Base(path))
			if err != nil {
				t.Fatal(err)
			}
			testutil.GoldenJSON(t, filepath.Join("testdata", "containers", strings.ReplaceAll(name, "/", "__")+".json"), got)
		})
	}
}

func TestContainers(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // id name state exit attempt pod ns, per row
		wantErr  string
	}{{
		name: "docker ps -a, aligned, with ports and health",
		in: "CONTAINER ID   IMAGE          COMMAND                  CREATED         STATUS                     PORTS                NAMES\n" +
			"3f1c2b9d8e7a   nginx:1.25     \"/docker-entrypoint.…\"   2 hours ago     Up 2 hours (healthy)       0.0.0.0:80->80/tcp   web\n" +
			"aa0bff115153   3cab8e1b9802   \"etcd --advertise-...\"   2 minutes ago   Exited (137) 51 seconds ago                     k8s_etcd_etcd-m1_kube-system_9a8ab44e28b43ed1203b49f15201573e_3\n",
		want: "3f1c2b9d8e7a web up -1 0 - -|Up 2 hours (healthy)\n" +
			"aa0bff115153 k8s_etcd_etcd-m1_kube-system_9a8ab44e28b43ed1203b49f15201573e_3 exited 137 3 etcd-m1 kube-system|Exited (137) 51 seconds ago\n",
	}, {
		name: "crictl ps -a",
		in: "CONTAINER           IMAGE               CREATED             STATE               NAME                ATTEMPT             POD ID              POD\n" +
			"1f73f2d81bf98       ba04bb24b9575       10 minutes ago      Running             coredns             2                   4c1e1e0e5a7e1       coredns-5d78c9869d-8gcxj\n" +
			"0c5e6d7f8a9b1       a0eed15eed449       About an hour ago   Exited              etcd                183                 77aa11bb22cc3       etcd-m1\n",
		want: "1f73f2d81bf98 coredns up -1 2 coredns-5d78c9869d-8gcxj -|Running\n" +
			"0c5e6d7f8a9b1 etcd exited -1 183 etcd-m1 -|Exited\n",
	}, {
		name:    "garbage",
		in:      "CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES\nnot a container row\n",
		wantErr: `ps.txt:2: syntax error: expected a container row (ID, IMAGE, COMMAND, CREATED, STATUS, NAMES) ("not a container row")`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Containers(strings.NewReader(tt.in), "ps.txt")
			var b strings.Builder
			for _, c := range got {
				dash := func(s string) string {
					if s == "" {
						return "-"
					}
					return s
				}
				b.WriteString(strings.Join([]string{c.ID, c.Name, c.State, strconv.Itoa(c.ExitCode), strconv.Itoa(c.Attempt), dash(c.Pod), dash(c.Namespace)}, " ") + "|" + c.Status + "\n")
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("error %q\nwant  %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestSniffContainers(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"CONTAINER ID  IMAGE  COMMAND  CREATED  STATUS  NAMES\n", true},
		{"a229f5e9ae69  rancher/hyperkube:v1.14.6-rancher1  \"/opt/rke-tools/entr…\"  11 months ago  Up 8 months   kube-apiserver\n", true},
		{"net.ipv4.ip_local_port_range = 1024 65000\n", false},
		{"--service-node-port-range=20000-40000\n", false},
		{"NAME                 STATUS      MESSAGE\nscheduler            Unhealthy   Get http://127.0.0.1:10251/healthz\n", false},
	} {
		if got := sniffContainers("x", []byte(tt.in)) > 0; got != tt.want {
			t.Errorf("sniff(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzContainers(f *testing.F) {
	f.Add("CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES\n3f1c2b9d8e7a   nginx   \"x\"   2 hours ago   Up 2 hours   web\n")
	f.Add("CONTAINER  IMAGE  CREATED  STATE  NAME  ATTEMPT  POD ID  POD\n1f73f2d81bf98 img 10 minutes ago Running c 2 4c1 p\n")
	f.Add("aa0bff115153 3cab \"etcd\" 2 minutes ago Exited (0) 51 seconds ago k8s_a_b_c_d_e\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, _ := Containers(strings.NewReader(in), "f")
		for _, c := range got {
			if c.ID == "" || c.State == "" || c.Pos.Line < 1 {
				t.Fatalf("incomplete container %+v", c)
			}
		}
	})
}
