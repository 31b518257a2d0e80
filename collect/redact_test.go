package collect_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/collect"
)

// redactProgram cuts the redaction program out of a generated script.
func redactProgram(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := collect.WriteScript(&b, collect.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(b.String(), "<<'NM_REDACT_AWK'\n")
	prog, _, ok2 := strings.Cut(rest, "NM_REDACT_AWK\n")
	if !ok || !ok2 {
		t.Fatal("no redaction program in the script")
	}
	return prog
}

// TestRedact runs the script's redaction program with awk on kubectl JSON,
// a static pod manifest and a command line.
func TestRedact(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("needs awk")
	}
	prog := redactProgram(t)
	for _, tc := range []struct{ in, want string }{
		{`      "name": "DB_PASSWORD",` + "\n" + `      "value": "hun\"ter2"`, `      "name": "DB_PASSWORD",` + "\n" + `      "value": "***HIDDEN***"`},
		{`      "name": "LOG_LEVEL",` + "\n" + `      "value": "debug"`, `      "name": "LOG_LEVEL",` + "\n" + `      "value": "debug"`},
		{`    "token": "abc.def",`, `    "token": "***HIDDEN***",`},
		{`    "tokenExpirationSeconds": 3600,`, `    "tokenExpirationSeconds": 3600,`},
		{`    "serviceAccountToken": {`, `    "serviceAccountToken": {`},
		{`    "kubectl.kubernetes.io/last-applied-configuration": "{\"spec\":{}}\n",`, `    "kubectl.kubernetes.io/last-applied-configuration": "***HIDDEN***",`},
		{`    "config.conf": "users:\n- token: s3cr3t\n  name: x"`, `    "config.conf": "users:\n- token: ***HIDDEN***\n  name: x"`},
		{`kube-apiserver --token-auth-file=/etc/t --secure-port=6443`, `kube-apiserver --token-auth-file=/etc/t --secure-port=6443`},
		{`kubelet --bootstrap-token=abcdef.0123456789abcdef --enable-bootstrap-token-auth=true`, `kubelet --bootstrap-token=***HIDDEN*** --enable-bootstrap-token-auth=true`},
		{`    - --kubelet-password=pw`, `    - --kubelet-password=***HIDDEN***`},
		{"    - name: API_KEY\n      value: abc", "    - name: API_KEY\n      value: '***HIDDEN***'"},
		{`    - --service-node-port-range=30000-32767`, `    - --service-node-port-range=30000-32767`},
	} {
		cmd := exec.Command("awk", prog)
		cmd.Stdin = strings.NewReader(tc.in + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("awk: %v\n%s", err, out)
		}
		if got := strings.TrimSuffix(string(out), "\n"); got != tc.want {
			t.Errorf("redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
