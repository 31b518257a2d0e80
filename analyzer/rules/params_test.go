package rules_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
)

// paramCall is one p.Param("name", default) call in a rule's source.
type paramCall struct {
	file, name string
	def        float64
	pos        token.Position
}

// paramCalls finds the p.Param calls of the package's non-test files.
func paramCalls(t *testing.T) []paramCall {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []paramCall
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Param" {
				return true
			}
			pos := fset.Position(call.Pos())
			if len(call.Args) != 2 {
				t.Errorf("%s: Param with %d arguments", pos, len(call.Args))
				return true
			}
			name, ok1 := call.Args[0].(*ast.BasicLit)
			def, ok2 := call.Args[1].(*ast.BasicLit)
			if !ok1 || !ok2 || name.Kind != token.STRING {
				t.Errorf("%s: Param's name and default must be literals, to be checked against the rule's Params", pos)
				return true
			}
			key, _ := strconv.Unquote(name.Value)
			d, err := strconv.ParseFloat(def.Value, 64)
			if err != nil {
				t.Errorf("%s: default %s: %v", pos, def.Value, err)
			}
			out = append(out, paramCall{file: f, name: key, def: d, pos: pos})
			return true
		})
	}
	return out
}

// Every p.Param call reads a parameter that the rules of its file declare,
// with the default they declare; a file of no rule (synfail.go, shared by
// syn-unanswered and syn-refused) is checked against each rule declaring
// the name.
func TestParamCallsDeclared(t *testing.T) {
	calls := paramCalls(t)
	if len(calls) == 0 {
		t.Fatal("no p.Param call found: the test reads the wrong files")
	}
	byFile := map[string][]*analyzer.Rule{}
	for _, r := range rules.All() {
		byFile[strings.ReplaceAll(r.Name, "-", "_")+".go"] = append(byFile[strings.ReplaceAll(r.Name, "-", "_")+".go"], r)
	}
	declared := 0
	for _, c := range calls {
		owners := byFile[c.file]
		if len(owners) == 0 {
			for _, r := range rules.All() {
				for _, p := range r.Params {
					if p.Name == c.name {
						owners = append(owners, r)
					}
				}
			}
		}
		if len(owners) == 0 {
			t.Errorf("%s: Param(%q): no rule declares it in its Params", c.pos, c.name)
		}
		for _, r := range owners {
			found := false
			for _, p := range r.Params {
				if p.Name == c.name {
					found = true
					declared++
					if p.Default != c.def {
						t.Errorf("%s: Param(%q, %v): rule %s declares the default %v", c.pos, c.name, c.def, r.Name, p.Default)
					}
				}
			}
			if !found {
				t.Errorf("%s: Param(%q): rule %s does not declare it in its Params", c.pos, c.name, r.Name)
			}
		}
	}
	// Every declared parameter is read somewhere.
	for _, r := range rules.All() {
		for _, p := range r.Params {
			read := false
			for _, c := range calls {
				read = read || c.name == p.Name
			}
			if !read {
				t.Errorf("rule %s declares parameter %q, which no Param call reads", r.Name, p.Name)
			}
		}
	}
	if declared < len(calls) {
		t.Errorf("%d Param calls, %d matched to declarations", len(calls), declared)
	}
}

// Every rule declares its subject keys, which configurations are checked
// against.
func TestSubjectKeysDeclared(t *testing.T) {
	for _, r := range rules.All() {
		if len(r.SubjectKeys) == 0 {
			t.Errorf("rule %s declares no SubjectKeys", r.Name)
		}
		if slices.Contains(r.SubjectKeys, "object") != (len(r.ObjectKinds) > 0) {
			t.Errorf("rule %s: SubjectKeys %v, ObjectKinds %v: the kinds of its objects are declared when (and only when) its subjects hold one",
				r.Name, r.SubjectKeys, r.ObjectKinds)
		}
	}
}
