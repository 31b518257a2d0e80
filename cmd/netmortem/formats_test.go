package main

import (
	"strings"
	"testing"
)

func TestFormatsUsage(t *testing.T) {
	if code, _, _ := runCLI(t, "formats", "-o", "xml"); code != exitUsage {
		t.Errorf("-o xml: exit %d, want %d", code, exitUsage)
	}
	code, out, _ := runCLI(t, "formats")
	if code != exitOK || !strings.Contains(out, "iptables-save") || !strings.Contains(out, "parse/netfilter") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}
