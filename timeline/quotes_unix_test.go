//go:build unix

package timeline

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// A named pipe at an evidence position is not opened (that would wait for
// a writer): its quote says why.
func TestQuotesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	qs := Quotes(context.Background(), []analyzer.Finding{{Evidence: []analyzer.Evidence{{Pos: model.Pos{File: fifo, Line: 1}}}}}, nil)
	if len(qs) != 1 || qs[0].Text != "(cannot quote line 1: not a regular file)" {
		t.Errorf("quotes %+v", qs)
	}
}
