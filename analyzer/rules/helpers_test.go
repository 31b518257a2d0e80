package rules

import (
	"context"
	"net/netip"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// Helpers of the tests that build snapshots by hand (those not yet moved to
// scenario directories of testdata/).

func sysctl(name, value string, line int) model.Sysctl {
	return model.Sysctl{Name: name, Value: value, Pos: model.Pos{File: "sysctl.txt", Line: line}}
}

func withSysctls(s *model.Snapshot, kv ...model.Sysctl) *model.Snapshot {
	s.Sysctls = append(s.Sysctls, kv...)
	s.Inputs = append(s.Inputs, model.Input{Path: "sysctl.txt", Kind: model.KindSysctl})
	return s
}

func withIPVS(s *model.Snapshot, addr string, line int) *model.Snapshot {
	s.IPVS = append(s.IPVS, model.IPVSService{Proto: "TCP", Addr: netip.MustParseAddrPort(addr), Scheduler: "rr",
		Pos: model.Pos{File: "ipvsadm.txt", Line: line}})
	s.Inputs = append(s.Inputs, model.Input{Path: "ipvsadm.txt", Kind: model.KindIPVS})
	return s
}

func run1(t *testing.T, r *analyzer.Rule, s *model.Snapshot) []analyzer.Finding {
	t.Helper()
	res := analyzer.Run(context.Background(), s, []*analyzer.Rule{r}, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("rule errors: %+v", res.Errors)
	}
	return res.Findings
}

func withAttempts(s *model.Snapshot, as ...model.Attempt) *model.Snapshot {
	s.Attempts = append(s.Attempts, as...)
	s.Inputs = append(s.Inputs, model.Input{Path: "capture.pcap", Kind: model.KindCapture})
	return s
}

func evStrings(ev []analyzer.Evidence) []string {
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = e.Pos.String()
	}
	return out
}
