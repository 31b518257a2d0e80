package rules

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// When the archive that held the apiserver's manifest was cut, the default
// NodePort range stands for the lost one: a nodePort outside it is no proof
// (info, named incomplete), while two Services giving one nodePort collide
// whatever the range (a warning still).
func TestNodePortCollisionOnALostRange(t *testing.T) {
	dir := analyzertest.EvidenceDir(t, filepath.Join("testdata", "nodeport-collision", "hit-restored-service"))
	bare := t.TempDir()
	for _, name := range []string{"services.json", "services-restored.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bare, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, cut := range []bool{false, true} {
		snap, _, err := parse.Open(ctx, bare, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cut {
			snap.Cuts = []model.Cut{{File: "bundle.tar", Where: "archive ends after member services-restored.json"}}
		}
		got := map[string]analyzer.Finding{}
		for _, f := range analyzer.Run(ctx, snap, []*analyzer.Rule{NodePortCollision}, nil).Findings {
			got[f.Subject["port"]] = f
		}
		collision, outside := got["32080"], got["36704"]
		if collision.Severity != analyzer.Warning || outside.Severity == 0 {
			t.Fatalf("cut %v: findings %v", cut, got)
		}
		if _, named := collision.Facts[analyzer.IncompleteFact]; named {
			t.Errorf("cut %v: the collision is named incomplete: %v", cut, collision.Facts)
		}
		_, named := outside.Facts[analyzer.IncompleteFact]
		if want := map[bool]analyzer.Severity{false: analyzer.Warning, true: analyzer.Info}[cut]; outside.Severity != want || named != cut {
			t.Errorf("cut %v: the port outside the default range: %v, incomplete %v", cut, outside.Severity, named)
		}
	}
}
