package capture

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// Frames decodes the frames asked for of a real capture, the same packets
// Read tracks, and stops at the highest; not a capture is an error.
func TestFrames(t *testing.T) {
	name := filepath.Join(testutil.Root(), "fixtures", "incidents", "stale-dnat", "capture.pcap")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Read(context.Background(), bytes.NewReader(data), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var frames []int
	want := map[int]string{}
	for _, a := range res.Attempts {
		for _, s := range a.SYN {
			frames = append(frames, s.Frame)
			want[s.Frame] = strings.ReplaceAll(a.Client.String(), ":", ".") + " > " + strings.ReplaceAll(a.Server.String(), ":", ".") + ": Flags [S]"
		}
	}
	got, err := Frames(context.Background(), bytes.NewReader(data), append(frames, 1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Errorf("%d frames decoded, want %d", len(got), len(want))
	}
	for f, w := range want {
		if !strings.Contains(got[f], w) {
			t.Errorf("frame %d: %q, want %q", f, got[f], w)
		}
	}
	if _, err := Frames(context.Background(), strings.NewReader("not a capture at all"), []int{1}); !errors.Is(err, ErrNotCapture) {
		t.Errorf("text: %v, want ErrNotCapture", err)
	}
	if got, err := Frames(context.Background(), strings.NewReader(""), nil); err != nil || len(got) != 0 {
		t.Errorf("no frames asked for: %v, %v", got, err)
	}
}
