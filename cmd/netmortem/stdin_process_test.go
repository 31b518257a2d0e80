//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// TestStdinProcess pipes evidence into a real netmortem process: the
// process's own stdin (a pipe, which cannot seek) is what "-" reads.
func TestStdinProcess(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		args         []string
		code         int
	}{
		{fixture("captures/handshakes.pcapng"), "pcapng", []string{"inspect", "-o", "json", "-"}, exitOK},
		{"", "", []string{"analyze", "-o", "json", "-"}, exitFindings}, // the incident as a tar.gz
	} {
		var in []byte
		if tc.file != "" {
			var err error
			if in, err = os.ReadFile(tc.file); err != nil {
				t.Fatal(err)
			}
		} else {
			in = testutil.TarGzDir(t, incident)
		}
		cmd := netmortemProcess(tc.args...)
		cmd.Stdin = bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Fatalf("%q: exit %d, want %d\n%s", tc.args, code, tc.code, stderr.String())
		}
		var rep jsonReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%q: %v\n%s", tc.args, err, out)
		}
		if tc.format != "" {
			if len(rep.Inputs) != 1 || rep.Inputs[0].Path != "<stdin>" || rep.Inputs[0].Format != tc.format || rep.Inputs[0].Records == 0 {
				t.Errorf("%q: inputs %+v, want <stdin> read as %s", tc.args, rep.Inputs, tc.format)
			}
		} else if len(rep.Findings) == 0 {
			t.Errorf("%q: no findings from the incident on stdin", tc.args)
		}
	}
}
