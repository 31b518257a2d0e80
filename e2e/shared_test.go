package e2e

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// analysis is what reading a committed bundle and running every rule on it
// gives, made once per test binary (see analyzeShared).
type analysis struct {
	once  sync.Once
	snap  *model.Snapshot
	warns model.ErrorList
	res   analyzer.Result
	err   error
}

// analysisKey names an analysis: the bundle's path as the test gave it
// (the positions of the findings are relative to it) and whether it was
// read in summary mode (parse.Options{Summary: {Enabled: true}}) or with
// no options.
type analysisKey struct {
	dir     string
	summary bool
}

// analyses holds the analyses of the committed bundles. Several tests
// check different things of the same bundles (the expected findings, the
// Decide commands, the next evidence, the fingerprints); analyzing each
// bundle again for each of them was most of the package's time under the
// race detector. Only the committed fixtures, which no test writes, are
// held; a bundle a test makes in a temporary directory is analyzed anew.
var analyses sync.Map // analysisKey -> *analysis

// analyzeShared reads dir, with opts nil or parse.Options{Summary:
// {Enabled: true}} and nothing else, and runs every rule on it; a committed
// bundle is analyzed once per test binary and its analysis shared. The
// snapshot and the findings' facts are shared with the other tests: callers
// must not modify them (the Findings slice is the caller's own).
func analyzeShared(t *testing.T, dir string, opts *parse.Options) (*model.Snapshot, model.ErrorList, analyzer.Result) {
	t.Helper()
	summary := opts != nil
	if summary && !reflect.DeepEqual(*opts, parse.Options{Summary: parse.Summary{Enabled: true}}) {
		t.Fatalf("analyzeShared: options %+v: only nil or summary mode are shared", *opts)
	}
	run := func(a *analysis) {
		ctx := context.Background()
		a.snap, a.warns, a.err = parse.Open(ctx, dir, opts)
		if a.err == nil {
			a.res = analyzer.Run(ctx, a.snap, rules.All(), nil)
		}
	}
	a := &analysis{}
	if committed(dir) {
		v, _ := analyses.LoadOrStore(analysisKey{filepath.Clean(dir), summary}, a)
		a = v.(*analysis)
	}
	a.once.Do(func() { run(a) })
	if a.err != nil {
		t.Fatalf("open %s: %v", dir, a.err)
	}
	res := a.res
	res.Findings = slices.Clone(res.Findings)
	return a.snap, a.warns, res
}

// committed reports whether dir is a bundle committed under fixtures/.
func committed(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	fixtures := filepath.Join(testutil.Root(), "fixtures") + string(filepath.Separator)
	if root, err := filepath.Abs(fixtures); err == nil {
		fixtures = root + string(filepath.Separator)
	}
	return strings.HasPrefix(abs, fixtures)
}

// allRules reports whether rs is the whole of rules.All(), in its order.
func allRules(rs []*analyzer.Rule) bool {
	return slices.Equal(rs, rules.All())
}
