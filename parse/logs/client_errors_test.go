package logs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// What helm, kubectl and kubeadm printed in three field tickets: each
// error line one event of its tool; kubectl's lines for the objects it
// wrote skipped.
func TestClientErrorsReal(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"fixtures/field/nodeport-collision--coturn-chart-75/helm-upgrade.txt",
			`1 E helm "UPGRADE FAILED: cannot patch \"stunrelay-turn-udp\" with kind Service: Service \"stunrelay-turn-udp\" is invalid: spec.ports[0].nodePort: Invalid value: 30030: provided port is already allocated" map[]`},
		// under oh-my-zsh's prompt, which names the command
		{"fixtures/field/nodeport-collision--redpanda-3263/kubectl-create.txt",
			`6 E kubectl "The Service \"my-service\" is invalid: spec.ports[0].nodePort: Invalid value: 30007: provided port is already allocated" map[command:kubectl create -f nodeport.yaml]`},
		{"fixtures/field/version-skew--gotok8s-8/kubeadm-init.txt",
			`1 E kubeadm "the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: \"1.13.0\" Control plane version: \"1.12.2\"" map[check:KubeletVersion]`},
	} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), c.file))
		if err != nil {
			t.Fatal(err)
		}
		// The oh-my-zsh prompts ("➜  temp kubectl create ...") are not
		// read as prompts: they count against the share, and name no command.
		if s := ClientErrorsFormat.Sniff(c.file, b); s < 40 {
			t.Errorf("%s: sniff %d", c.file, s)
		}
		var got []string
		for _, ev := range readClientErrorsString(t, string(b)) {
			got = append(got, clientErrorLine(ev))
		}
		if strings.Join(got, "\n") != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.file, strings.Join(got, "\n"), c.want)
		}
	}
}

// kubeadm's phases and warnings, kubectl's server errors; prose is not
// theirs.
func TestClientErrorsForms(t *testing.T) {
	in := "[preflight] Running pre-flight checks\n" +
		"\t[WARNING SystemVerification]: this Docker version is not on the list of validated versions: 18.09.0\n" +
		"error execution phase preflight: [preflight] Some fatal errors occurred:\n" +
		"Error from server (AlreadyExists): services \"web\" already exists\n"
	var got []string
	for _, ev := range readClientErrorsString(t, in) {
		got = append(got, clientErrorLine(ev))
	}
	want := `1 I kubeadm "[preflight] Running pre-flight checks" map[]|` +
		`2 W kubeadm "this Docker version is not on the list of validated versions: 18.09.0" map[check:SystemVerification]|` +
		`3 E kubeadm "error execution phase preflight: [preflight] Some fatal errors occurred:" map[]|` +
		`4 E kubectl "Error from server (AlreadyExists): services \"web\" already exists" map[]`
	if strings.Join(got, "|") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	for _, prose := range []string{"Error: the thing failed\n", "The fix is invalid here\nand more prose\n"} {
		if s := ClientErrorsFormat.Sniff("x.txt", []byte(prose)); s != 0 {
			t.Errorf("%q sniffed %d", prose, s)
		}
	}
}

func clientErrorLine(ev model.LogEvent) string {
	return strings.Join([]string{itoa(ev.Pos.Line), ev.Level, ev.Source, quote(ev.Message), fieldsString(ev.Fields)}, " ")
}

func readClientErrorsString(t *testing.T, in string) []model.LogEvent {
	t.Helper()
	snap := &model.Snapshot{}
	src := &format.File{Name: "x.txt", Format: ClientErrorsFormat.Name}
	if _, err := ClientErrorsFormat.Parse(context.Background(), strings.NewReader(in), src, snap); err != nil {
		t.Error(err)
	}
	return snap.Logs
}

func FuzzClientErrors(f *testing.F) {
	f.Add("$ helm upgrade x\nError: UPGRADE FAILED: cannot patch \"x\"\n")
	f.Add("\t[ERROR KubeletVersion]: the kubelet version is higher\n[init] Using Kubernetes version: v1.12.2\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzFormat(t, ClientErrorsFormat, in) })
}

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string { return strconv.Quote(s) }

func fieldsString(m map[string]string) string { return fmt.Sprint(m) }

// kubectl's TLS failures are its error lines, not a client's connection
// outcome: "Unable to connect to the server: x509: ..." (easzlab/kubeasz#922,
// and Go 1.20's "tls: failed to verify certificate: x509: ..."); its
// other "Unable to connect" lines are left to the client-transcript format.
func TestClientErrorsKubectlTLS(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{"Unable to connect to the server: x509: certificate has expired or is not yet valid", true},
		{"Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority", true},
		{"Unable to connect to the server: dial tcp 10.0.0.10:6443: i/o timeout", false},
	} {
		ev, ok := clientError(c.line)
		if ok != c.ok || ok && (ev.Source != "kubectl" || ev.Level != "E" || ev.Message != c.line) {
			t.Errorf("%q: %+v, %v", c.line, ev, ok)
		}
	}
}
