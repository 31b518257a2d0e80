package flows

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// TestWriteJSONAsEncoder holds the JSON form, written a value at a time,
// to what json.Encoder indenting by two spaces writes for the whole table:
// a full table (node names with HTML characters, every kind of segment,
// data sizes, an overlay), a filtered one, an empty one, and a table with
// no attempt list. A field added to Table and not to writeJSON fails it.
func TestWriteJSONAsEncoder(t *testing.T) {
	snap := snapshot()
	a := &snap.Attempts[1]
	a.Node, a.History, a.Reused = "node<&>\u2028", "ShR", "time-wait"
	a.ClientRST = []model.Seg{{Frame: 12, Time: a.Start.Add(5e6)}}
	a.FirstAck = &model.Seg{Frame: 11, Line: 3, File: "x.pcap", Time: a.Start.Add(4e6)}
	a.ClientData = &model.DataSizes{MaxSent: 1448, MaxAcked: 500, LargeRetx: 2, LargeRetxSize: 1448, Retx: []model.Seg{{Frame: 13}}}
	a.Outer = &model.Tuple{}
	tables := map[string]*Table{
		"full":     Build(snap, Filter{}),
		"filtered": Build(snapshot(), Filter{States: []string{"REJ"}}),
		"empty":    Build(&model.Snapshot{}, Filter{}),
		"nil":      Build(nil, Filter{}),
		"no list":  {Summary: model.Counts{Packets: 1}},
	}
	for name, tab := range tables {
		var got, want bytes.Buffer
		if err := tab.Write(&got, "json"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(tab); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: writeJSON differs from json.Encoder:\n%s\nwant\n%s", name, got.String(), want.String())
		}
		if name == "full" && !strings.Contains(got.String(), `"attempts": [`) {
			t.Errorf("full: no attempts written:\n%s", got.String())
		}
	}
}
