package rules_test

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

func TestAllValid(t *testing.T) {
	if err := analyzer.Validate(rules.All()); err != nil {
		t.Fatal(err)
	}
	for _, r := range rules.All() {
		if rules.Lookup(r.Name) != r {
			t.Errorf("Lookup(%q) is not the rule of All", r.Name)
		}
	}
	if rules.Lookup("no-such-rule") != nil {
		t.Error("Lookup of an unknown rule")
	}
	for _, r := range rules.All() {
		if r.Proof == "" || r.Unproven == "" {
			t.Errorf("rule %s does not say which evidence proves its cause (Proof) or what it says without it (Unproven)", r.Name)
		}
	}
	if got := rules.LBControllerConflict.NeedsText(); got != "one of kube, logs, settings" {
		t.Errorf("NeedsText %q", got)
	}
	if got := rules.StaleDNAT.NeedsText(); got != "netfilter, kube" {
		t.Errorf("NeedsText %q", got)
	}
}

// TestEveryRuleHasScenarios holds every rule to scenarios of real evidence:
// one where it reports, and one where the symptom is there but the cause
// is not (miss-*, or hit-symptom-* where it reports the cause unknown) or
// a healthy control.
func TestEveryRuleHasScenarios(t *testing.T) {
	for _, r := range rules.All() {
		entries, err := os.ReadDir(filepath.Join("testdata", r.Name))
		if err != nil {
			t.Errorf("rule %s has no scenarios: %v", r.Name, err)
			continue
		}
		var hit, miss bool
		for _, e := range entries {
			hit = hit || e.IsDir() && strings.HasPrefix(e.Name(), "hit-")
			miss = miss || e.IsDir() && (strings.HasPrefix(e.Name(), "miss-") || strings.HasPrefix(e.Name(), "hit-symptom-"))
		}
		if !hit || !miss {
			t.Errorf("rule %s: scenarios where it reports (%v) and where it must not claim its cause (%v) both needed", r.Name, hit, miss)
		}
	}
}

// companionOf returns the rule file pf is a companion of: a file that
// declares no rule, named after a rule file with a part added
// (rp_filter_drop_martian.go is rp_filter_drop.go's). It is nil for any
// other file.
func companionOf(files []*pkgFile, pf *pkgFile) *pkgFile {
	if len(pf.rules) > 0 || slices.Contains(shared, pf.name) {
		return nil
	}
	var best *pkgFile
	for _, rf := range files {
		base := strings.TrimSuffix(rf.name, ".go")
		if len(rf.rules) > 0 && strings.HasPrefix(pf.name, base+"_") && (best == nil || len(rf.name) > len(best.name)) {
			best = rf
		}
	}
	return best
}

// pkgFile is one non-test file of the package.
type pkgFile struct {
	name  string
	src   []byte
	ast   *ast.File
	rules map[string]string // the *analyzer.Rule variables it declares, to their Name
	decls []string          // every package-level name it declares
}

// shared are the files every rule file may use: the list, the text and
// evidence helpers, and the helpers of a family of rules.
var shared = []string{"all.go", "text.go", "evidence.go", "subject.go", "portranges.go", "synfail.go", "synfail_client.go", "symptoms.go",
	"iptables_binary.go", "sandbox.go", "preflight.go"}

// edges returns the values of the Explains and FollowsFrom fields of the
// rule literals of f: the only places a rule file may name another rule.
func edges(f *ast.File) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Explains" || k.Name == "FollowsFrom") {
				out = append(out, kv.Value)
			}
		}
		return true
	})
	return out
}

// inEdges reports whether pos is within one of es.
func inEdges(es []ast.Expr, pos token.Pos) bool {
	return slices.ContainsFunc(es, func(e ast.Expr) bool { return e.Pos() <= pos && pos < e.End() })
}

func packageFiles(t *testing.T) []*pkgFile {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []*pkgFile
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pf := &pkgFile{name: name, src: src, ast: f, rules: map[string]string{}}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					pf.decls = append(pf.decls, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						pf.decls = append(pf.decls, sp.Name.Name)
					case *ast.ValueSpec:
						for i, n := range sp.Names {
							pf.decls = append(pf.decls, n.Name)
							if i < len(sp.Values) {
								if name, ok := ruleName(sp.Values[i]); ok {
									pf.rules[n.Name] = name
								}
							}
						}
					}
				}
			}
		}
		out = append(out, pf)
	}
	return out
}

// ruleName returns the Name of a &analyzer.Rule{...} literal.
func ruleName(e ast.Expr) (string, bool) {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return "", false
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Rule" {
		return "", false
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
				if b, ok := kv.Value.(*ast.BasicLit); ok {
					name, err := strconv.Unquote(b.Value)
					return name, err == nil
				}
			}
		}
	}
	return "", true
}

// Every rule has its own file, named after it, and every other file is
// one of the shared ones or a companion of a rule file, which holds a part
// of that rule too large to keep beside it; a rule's files use nothing
// another rule's files declare but its rule, in its Explains and
// FollowsFrom edges, and no shared file uses what a rule's files declare
// (but all.go its rule).
func TestRuleFilesSelfContained(t *testing.T) {
	files := packageFiles(t)
	owner := map[string]*pkgFile{} // package-level name to the rule file declaring it
	listed := map[string]bool{}
	for _, pf := range files {
		switch {
		case len(pf.rules) > 1:
			t.Errorf("%s declares %d rules, want one per file", pf.name, len(pf.rules))
		case len(pf.rules) == 0 && !slices.Contains(shared, pf.name) && companionOf(files, pf) == nil:
			t.Errorf("%s declares no rule, is not one of the shared files %v and is no rule file's companion "+
				"(<rule file>_<part>.go)", pf.name, shared)
		}
		for v, name := range pf.rules {
			listed[v] = true
			if want := strings.ReplaceAll(name, "-", "_") + ".go"; pf.name != want {
				t.Errorf("rule %s (%s) is in %s, want %s", name, v, pf.name, want)
			}
			for _, d := range pf.decls {
				owner[d] = pf
			}
		}
	}
	for _, pf := range files {
		if rf := companionOf(files, pf); rf != nil {
			for _, d := range pf.decls {
				owner[d] = rf
			}
		}
	}
	for _, r := range rules.All() {
		found := false
		for _, pf := range files {
			for _, name := range pf.rules {
				found = found || name == r.Name
			}
		}
		if !found {
			t.Errorf("rule %s of All has no file of its own", r.Name)
		}
	}
	for _, pf := range files {
		// Identifiers a file does not declare itself stay unresolved in
		// its syntax tree: those are the ones it takes from elsewhere.
		for _, id := range pf.ast.Unresolved {
			o := owner[id.Name]
			if o == nil || o == pf || o == companionOf(files, pf) || pf.name == "all.go" && listed[id.Name] {
				continue
			}
			if listed[id.Name] && len(pf.rules) > 0 && inEdges(edges(pf.ast), id.Pos()) {
				continue // an edge to another rule
			}
			t.Errorf("%s uses %s, which rule file %s declares: move it to a shared file or a fact", pf.name, id.Name, o.name)
		}
	}
}

// The package builds with any one rule's file and its companions deleted,
// its line in All removed, and the edges of other rules that name it
// (Explains, FollowsFrom) removed: the type checker runs over the package
// without each rule in turn, and the only errors it reports are at those
// edges.
func TestBuildsWithoutEachRule(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	list := exec.Command(goCmd, "list", "-deps", "-export", "-f", "{{.ImportPath}}={{.Export}}", ".")
	list.Env = append(os.Environ(), "CGO_ENABLED=0") // as make lint and vet compile it
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "="); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	files := packageFiles(t)
	check := func(without *pkgFile) error {
		var asts []*ast.File
		var es []ast.Expr
		for _, pf := range files {
			if without != nil && (pf == without || companionOf(files, pf) == without) {
				continue
			}
			src := pf.src
			if pf.name == "all.go" && without != nil {
				for v := range without.rules {
					src = bytes.ReplaceAll(src, []byte("\t\t"+v+",\n"), nil)
				}
			}
			f, err := parser.ParseFile(fset, pf.name, src, 0)
			if err != nil {
				return err
			}
			asts = append(asts, f)
			es = append(es, edges(f)...)
		}
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			if te, ok := err.(types.Error); ok && without != nil && inEdges(es, te.Pos) && strings.HasPrefix(te.Msg, "undefined: ") {
				if _, isRule := without.rules[strings.TrimPrefix(te.Msg, "undefined: ")]; isRule {
					return // an edge naming the deleted rule, to remove with it
				}
			}
			errs = append(errs, err.Error())
		}}
		conf.Check("github.com/netmortem/netmortem/analyzer/rules", fset, asts, nil)
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "\n"))
		}
		return nil
	}
	if err := check(nil); err != nil {
		t.Fatalf("the whole package: %v", err)
	}
	var ruleFiles []*pkgFile
	for _, pf := range files {
		if len(pf.rules) > 0 {
			ruleFiles = append(ruleFiles, pf)
		}
	}
	if len(ruleFiles) != len(rules.All()) {
		t.Errorf("%d rule files, want %d", len(ruleFiles), len(rules.All()))
	}
	// The type checker runs on this goroutine only: under the race
	// detector a sample of the rules is enough, and make test checks
	// every rule without it (NORACE_TESTS).
	for _, pf := range testutil.RaceSample(t, 8, ruleFiles) {
		if err := check(pf); err != nil {
			t.Errorf("without %s:\n%v", pf.name, err)
		}
	}
}

// BenchmarkAll runs every rule on every fixture at once, facts included.
func BenchmarkAll(b *testing.B) {
	snap, _, err := parse.Open(context.Background(), filepath.Join(testutil.Root(), "fixtures"), &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		analyzer.Run(context.Background(), snap, rules.All(), nil)
	}
}
