package kube

import (
	"errors"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/format"
)

// A JSON document or kubectl List cut before its end is a truncated input;
// a malformed one, or a whole List, is not.
func TestKubectlCut(t *testing.T) {
	list := "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: a\n    namespace: default\n"
	for _, c := range []struct {
		name, text string
		cut        bool
	}{
		{"json cut", `{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Service", "metadata": {"name": "a"}}` + "\n", true},
		{"json cut in a string", `{"kind": "Service", "metadata": {"name": "a{[` + "\n", true},
		{"json malformed", `{"kind": "Service", "metadata": {"name": "a"}}}}` + "\n", false},
		{"json whole", `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}` + "\n", false},
		{"yaml list cut", list, true},
		{"yaml list whole", list + "kind: List\nmetadata:\n  resourceVersion: \"\"\n", false},
	} {
		_, err := KubeObjects(strings.NewReader(c.text), "x")
		if got := errors.Is(err, format.ErrTruncated); got != c.cut {
			t.Errorf("%s: %v, want truncated %v", c.name, err, c.cut)
		}
	}
}
