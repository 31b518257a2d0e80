package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// makeTestList matches the list of tests the Makefile runs again without
// the race detector: NORACE_TESTS = TestA|TestB.
var makeTestList = regexp.MustCompile(`(?m)^NORACE_TESTS *= *(.*)$`)

// makePkgList matches a list of packages: NAME = ./a ./b.
func makePkgList(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + name + ` *= *(.*)$`)
}

// TestSampledTestsRunWhole holds that every test that checks only a sample
// of its inputs under the race detector (it calls testutil.RaceSample or
// cmd/netmortem's sampled, or asks raceEnabled) runs without -race over
// every input in make test: its package is in the Makefile's WHOLE_PKGS or
// not in RACE_PKGS, whose tests all run without -race, or it is listed in
// NORACE_TESTS and its package in NORACE_PKGS. Otherwise what it checks of
// the inputs left out would never run.
func TestSampledTestsRunWhole(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(Root(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	if m := makeTestList.FindStringSubmatch(string(mk)); m != nil {
		for _, name := range strings.Split(m[1], "|") {
			listed[strings.TrimSpace(name)] = true
		}
	}
	if len(listed) == 0 {
		t.Fatal("the Makefile lists no NORACE_TESTS")
	}
	pkgList := func(name string) map[string]bool {
		pkgs := map[string]bool{}
		if m := makePkgList(name).FindStringSubmatch(string(mk)); m != nil {
			for _, p := range strings.Fields(m[1]) {
				pkgs[filepath.Clean(p)] = true
			}
		}
		if len(pkgs) == 0 {
			t.Fatalf("the Makefile lists no %s", name)
		}
		return pkgs
	}
	pkgs, whole, race := pkgList("NORACE_PKGS"), pkgList("WHOLE_PKGS"), pkgList("RACE_PKGS")
	// underRace says whether make test runs the package's tests under the
	// race detector: RACE_PKGS names it, or a pattern ./dir/... covers it.
	underRace := func(dir string) bool {
		for p := range race {
			if p == dir || strings.HasSuffix(p, "/...") && (dir == strings.TrimSuffix(p, "/...") || strings.HasPrefix(dir, strings.TrimSuffix(p, "..."))) {
				return true
			}
		}
		return false
	}
	var sampling []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(Root(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != Root() && (strings.HasPrefix(n, ".") || n == "testdata" || n == "fixtures") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !samples(fn.Body) {
				continue
			}
			rel, _ := filepath.Rel(Root(), path)
			sampling = append(sampling, fn.Name.Name)
			switch {
			case whole[filepath.Dir(rel)] || !underRace(filepath.Dir(rel)):
				// make test runs every test of the package without -race.
			case !listed[fn.Name.Name]:
				t.Errorf("%s: %s checks a sample under the race detector, but the Makefile's NORACE_TESTS does not list it nor WHOLE_PKGS its package: make test would never check the rest",
					rel, fn.Name.Name)
			case !pkgs[filepath.Dir(rel)]:
				t.Errorf("%s: %s checks a sample under the race detector, but the Makefile's NORACE_PKGS does not list ./%s",
					rel, fn.Name.Name, filepath.Dir(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(sampling)
	if len(sampling) < 5 {
		t.Errorf("found %d sampling tests (%v): the walk missed them", len(sampling), sampling)
	}
	for name := range listed {
		if !strings.HasPrefix(name, "Test") {
			t.Errorf("the Makefile lists %q, not a test's name", name)
		}
	}
}

// samples reports whether body samples its inputs under the race
// detector.
func samples(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			found = found || x.Name == "sampled" || x.Name == "raceEnabled"
		case *ast.SelectorExpr:
			found = found || x.Sel.Name == "RaceSample"
		}
		return !found
	})
	return found
}
