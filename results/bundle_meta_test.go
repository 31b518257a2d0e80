package results

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/model"
)

func TestWeek(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "unknown"},
		{time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC), "2026-W48"},
		{time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), "2026-W53"},
		{time.Date(2027, 1, 3, 23, 59, 59, 0, time.UTC), "2026-W53"},
		{time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC), "2027-W01"},
		// A time given in another zone counts in UTC.
		{time.Date(2027, 1, 4, 0, 30, 0, 0, time.FixedZone("CET", 3600)), "2026-W53"},
	} {
		if got := Week(c.t); got != c.want {
			t.Errorf("Week(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}

func TestMinorVersion(t *testing.T) {
	for v, want := range map[string]string{"v1.31.2+k3s1": "1.31", "v1.9.0": "1.9", "1.28": "1.28",
		"v1.27.4-eks-2d98532": "1.27", "": "unknown", "devel": "unknown"} {
		if got := MinorVersion(v); got != want {
			t.Errorf("MinorVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

func node(v string) model.Node {
	var n model.Node
	n.Status.NodeInfo.KubeletVersion = v
	return n
}

func TestKubernetesVersion(t *testing.T) {
	s := &model.Snapshot{}
	if got := KubernetesVersion(s); got != "" {
		t.Errorf("empty snapshot: %q", got)
	}
	s.Kube.Nodes = []model.Node{node("v1.30.1"), node("v1.31.2"), node("v1.31.2"), node("garbage")}
	if got := KubernetesVersion(s); got != "v1.31.2" {
		t.Errorf("nodes: %q, want the most common, v1.31.2", got)
	}
	s.ServerVersions = []model.ServerVersion{{GitVersion: "unknown"}, {GitVersion: "v1.29.0+k3s1"}}
	if got := KubernetesVersion(s); got != "v1.29.0+k3s1" {
		t.Errorf("server version: %q, want the apiserver's", got)
	}
}

func TestBundleTime(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	mod := time.Date(2026, 11, 20, 8, 0, 0, 500, time.UTC)
	s := &model.Snapshot{}
	if got, src := BundleTime(s, time.Time{}, now); !got.IsZero() || src != "" {
		t.Errorf("nothing: %s %q", got, src)
	}
	if got, src := BundleTime(s, mod, now); !got.Equal(mod.Truncate(time.Second)) || src != TimeFromModified {
		t.Errorf("modified: %s %q", got, src)
	}
	ev := model.Event{}
	ev.LastTimestamp = metav1.NewTime(time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC))
	ev.Type = corev1.EventTypeWarning
	s.Kube.Events = []model.Event{ev}
	if got, src := BundleTime(s, mod, now); got.Day() != 19 || src != TimeFromEvents {
		t.Errorf("events: %s %q", got, src)
	}
	s.Logs = []model.LogEvent{
		{Time: time.Date(0, 11, 24, 0, 0, 0, 0, time.UTC)}, // no year: not taken
		{Time: time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)},
		{Time: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)}, // a wrong clock: not taken
	}
	if got, src := BundleTime(s, mod, now); got.Day() != 18 || src != TimeFromLogs {
		t.Errorf("logs: %s %q", got, src)
	}
	s.Captures = []model.CaptureInfo{{Last: time.Date(2026, 11, 17, 1, 2, 3, 4, time.FixedZone("X", 3600))}}
	if got, src := BundleTime(s, mod, now); !got.Equal(s.Captures[0].Last.Truncate(time.Microsecond)) || got.Location() != time.UTC ||
		got.Nanosecond()%1000 != 0 || src != TimeFromCapture {
		t.Errorf("capture: %s %q", got, src)
	}
}
