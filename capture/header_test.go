package capture_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
)

// A capture whose header is cut short gives an error at the file's
// position, which names the file once.
func TestHeaderErrorAtFile(t *testing.T) {
	_, err := capture.Read(context.Background(), bytes.NewReader([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}), "hdr.pcap", capture.Options{})
	var e *model.Error
	if !errors.As(err, &e) || e.Pos.File != "hdr.pcap" {
		t.Fatalf("error %v, want one at hdr.pcap", err)
	}
	if strings.Contains(e.Err.Error(), "hdr.pcap") || err.Error() != "hdr.pcap: pcap header: unexpected EOF" {
		t.Errorf("error %q (cause %q): want the file named once, by the position", err, e.Err)
	}
	var list model.ErrorList
	list.Append(err)
	if len(list) != 1 || list[0].Pos.File != "hdr.pcap" {
		t.Errorf("appended to a list: %v", list)
	}
}
