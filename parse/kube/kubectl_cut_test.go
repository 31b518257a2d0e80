package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
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

// A read the run stops within a document leaves that document out, with
// the stop as its only warning: the document is not malformed, nor the
// input cut, and the documents before what was read ahead are kept.
func TestKubectlStopped(t *testing.T) {
	doc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: a%d\n  namespace: default\nspec:\n  ports:\n  - port: 80\n---\n"
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, doc, i)
	}
	in := b.String()
	for _, at := range []int{len(doc) * 100, len(doc)*200 + 17, len(doc)*250 + 41} {
		ctx, cancel := context.WithCancel(t.Context())
		r := &testutil.CancelingReader{R: strings.NewReader(in), Left: at, Ctx: ctx, Cancel: cancel}
		var snap model.Snapshot
		var errs model.ErrorList
		n := readKube(ctx, r, &format.File{Name: "svc.yaml"}, &snap, &errs)
		cancel()
		if len(errs) != 1 || !errors.Is(errs[0], model.ErrStopped) || errs[0].Pos.File != "svc.yaml" {
			t.Errorf("stopped at byte %d: errors %v; want only the stop", at, errs.Err())
		}
		if n == 0 || n > at/len(doc)+1 || len(snap.Kube.Services) != n {
			t.Errorf("stopped at byte %d: %d objects, %d services; want those before it", at, n, len(snap.Kube.Services))
		}
	}
}

// endCancel reads r and cancels its context as it gives r's end: the
// run ends just as its input was read whole.
type endCancel struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (e *endCancel) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.cancel()
	}
	return n, err
}

// A stream read to its end before the run's end is read whole, though
// the run ended while its last documents were worked out.
func TestKubectlEndedAfterTheRead(t *testing.T) {
	doc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: a%d\n  namespace: default\nspec:\n  ports:\n  - port: 80\n"
	for _, docs := range []int{1, 5, 300} {
		var b strings.Builder
		for i := range docs {
			if i > 0 {
				b.WriteString("---\n")
			}
			fmt.Fprintf(&b, doc, i)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var snap model.Snapshot
		var errs model.ErrorList
		n := readKube(ctx, &endCancel{strings.NewReader(b.String()), cancel}, &format.File{Name: "svc.yaml"}, &snap, &errs)
		cancel()
		if n != docs || len(errs) > 0 {
			t.Errorf("%d documents, the run ended at their end: %d read, errors %v; want all, none", docs, n, errs.Err())
		}
	}
}
