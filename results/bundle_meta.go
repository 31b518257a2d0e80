package results

import (
	"sort"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// The sources of a bundle's time (Line.BundleTimeSource).
const (
	TimeFromCapture  = "capture"  // the last packet of its captures
	TimeFromLogs     = "logs"     // its newest log line that names its year
	TimeFromEvents   = "events"   // its newest Kubernetes event
	TimeFromModified = "modified" // the bundle's modification time in storage
)

// BundleTime is when the evidence of snap was taken: the last packet of its
// captures, else its newest dated log line, else its newest Kubernetes
// event, else modified (the file's or the object's modification time, to
// the second, when not zero). Times more than a day after now are not taken (a clock that
// was wrong), nor log times whose line did not give the year. It returns
// the time in UTC, to the microsecond (as PostgreSQL keeps it, so that every
// sink holds the same time), and where it comes from.
func BundleTime(snap *model.Snapshot, modified, now time.Time) (time.Time, string) {
	limit := now.Add(24 * time.Hour)
	valid := func(t time.Time) bool { return t.Year() >= 2000 && t.Before(limit) }
	latest := func(ts []time.Time) time.Time {
		var m time.Time
		for _, t := range ts {
			if valid(t) && t.After(m) {
				m = t
			}
		}
		return m
	}
	var caps, logs, events []time.Time
	for _, c := range snap.Captures {
		caps = append(caps, c.Last)
	}
	if t := latest(caps); !t.IsZero() {
		return micro(t), TimeFromCapture
	}
	for _, l := range snap.Logs {
		logs = append(logs, l.Time)
	}
	if t := latest(logs); !t.IsZero() {
		return micro(t), TimeFromLogs
	}
	for _, e := range snap.Kube.Events {
		events = append(events, e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time)
	}
	if t := latest(events); !t.IsZero() {
		return micro(t), TimeFromEvents
	}
	if !modified.IsZero() {
		// To the second, as object stores give it (Last-Modified), so
		// that a bundle's copy on disk and in a bucket agree.
		return modified.UTC().Truncate(time.Second), TimeFromModified
	}
	return time.Time{}, ""
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

var kubeVersion = lazyre.New(`^v?(\d+)\.(\d+)(\.\d+)?`)

// KubernetesVersion is the version of the cluster snap comes from: the
// apiserver's gitVersion (kubectl version, cluster-info dump), else the
// kubelet version most of its nodes report (the highest on a tie); "" when
// the bundle shows neither.
func KubernetesVersion(snap *model.Snapshot) string {
	for _, sv := range snap.ServerVersions {
		if kubeVersion.MatchString(sv.GitVersion) {
			return sv.GitVersion
		}
	}
	n := map[string]int{}
	for _, node := range snap.Kube.Nodes {
		if v := node.Status.NodeInfo.KubeletVersion; kubeVersion.MatchString(v) {
			n[v]++
		}
	}
	vs := make([]string, 0, len(n))
	for v := range n {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool {
		if n[vs[i]] != n[vs[j]] {
			return n[vs[i]] > n[vs[j]]
		}
		return vs[i] > vs[j]
	})
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// MinorVersion is the Kubernetes minor version of a gitVersion, as "1.31"
// for "v1.31.2+k3s1"; "unknown" when v is not a version. Queries group
// bundles by it.
func MinorVersion(v string) string {
	m := kubeVersion.FindStringSubmatch(v)
	if m == nil {
		return UnknownVersion
	}
	return m[1] + "." + m[2]
}

// UnknownVersion is the version of a bundle that shows none.
const UnknownVersion = "unknown"
