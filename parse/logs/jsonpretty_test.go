package logs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/logs"
)

// A JSON log record pasted pretty-printed, its message broken over lines
// by the paste, is one record at the line of its "{"; a nested object's
// closing brace does not end it.
func TestPrettyJSONRecord(t *testing.T) {
	in := "{\n" +
		"  \"level\": \"error\",\n" +
		"  \"ts\": \"2020-05-18T08:52:22.632Z\",\n" +
		"  \"fields\": {\n" +
		"    \"eni\": \"eni-03c5e1d7a9b24f680e\"\n" +
		"  },\n" +
		"  \"msg\": \"failed to allocate a private IP address: \n" +
		"          InsufficientFreeAddressesInSubnet: The specified subnet does not have enough free addresses.\"\n" +
		"}\n" +
		"{\"level\":\"info\",\"ts\":\"2020-05-18T08:52:23.000Z\",\"msg\":\"next\"}\n"
	evs, err := logs.Logs(strings.NewReader(in), "ipamd.log")
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	ev := evs[0]
	if ev.Pos.Line != 1 || ev.Level != "error" || ev.Time.IsZero() || ev.Fields["fields"] != `{"eni":"eni-03c5e1d7a9b24f680e"}` ||
		ev.Message != "failed to allocate a private IP address: InsufficientFreeAddressesInSubnet: The specified subnet does not have enough free addresses." {
		t.Errorf("the pretty record: %+v", ev)
	}
	if evs[1].Pos.Line != 10 || evs[1].Message != "next" {
		t.Errorf("the line after it: %+v", evs[1])
	}
}

// Lines after a "{" that make no log record (a pretty-printed object
// without level or message, or one never closed) are read one by one, as
// they were: the klog line before them keeps its place and the bad lines
// are reported where they are.
func TestPrettyJSONNotARecord(t *testing.T) {
	in := "I0101 00:00:00.000000       1 round_trippers.go:1] Response Body:\n" +
		"{\n" +
		"  \"kind\": \"Status\"\n" +
		"}\n" +
		"I0101 00:00:01.000000       1 main.go:2] done\n" +
		"{\n" +
		"  \"level\": \"error\",\n"
	evs, err := logs.Logs(strings.NewReader(in), "x.log")
	if len(evs) != 2 || evs[0].Pos.Line != 1 || evs[1].Pos.Line != 5 {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	var el model.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error %v", err)
	}
	var lines []int
	for _, e := range el {
		lines = append(lines, e.Pos.Line)
	}
	if !slices.Equal(lines, []int{2, 4, 6}) { // the indented lines continue the entry before
		t.Errorf("errors at lines %v, want 2, 4, 6: %v", lines, err)
	}
}

func TestPrettyJSONSniff(t *testing.T) {
	own := []string{"fixtures/field/cni-ipam-exhausted--aws-vpc-cni-issue-872/ipamd.log"}
	others := []string{"fixtures/field/pod-cidr-overlap--weave-issue-3211/weave.log"}
	parsetest.CheckSniff(t, parse.Formats(), logs.JSONLogFormat, own, others)
}
