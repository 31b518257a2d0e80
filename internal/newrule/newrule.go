// Command newrule writes the start of a new rule of netmortem: its file in
// analyzer/rules (a documented *analyzer.Rule whose TODOs say what to
// fill in), its line in analyzer/rules/all.go, its test, and its scenario
// directory, analyzer/rules/testdata/NAME/, with a README. It is run by
// `make new-rule NAME=my-rule` from the module's root:
//
//	go run ./internal/newrule my-rule
//
// Nothing else needs an edit: report, timeline, collect, SARIF and the
// generated docs read what they need from the rule's value.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: newrule [-root DIR] NAME (a kebab-case rule name: my-rule)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	files, err := Write(*root, flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "newrule:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
}

// rulesDir is where the rules are, from the module's root.
const rulesDir = "analyzer/rules"

var ruleName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// acronyms are the words of a rule's name written in capitals in its Go
// name, as the rules do (ARPFlap, NATReplyUntranslated).
var acronyms = map[string]bool{
	"api": true, "arp": true, "dns": true, "dnat": true, "icmp": true, "ip": true, "ipvs": true, "lb": true,
	"mtu": true, "nat": true, "snat": true, "tcp": true, "udp": true, "vip": true, "http": true, "tls": true,
}

// GoName is the name of the variable of rule name: "arp-flap" is ARPFlap.
func GoName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "-") {
		if acronyms[w] {
			b.WriteString(strings.ToUpper(w))
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// FileName is the file of rule name in analyzer/rules: arp_flap.go.
func FileName(name string) string { return strings.ReplaceAll(name, "-", "_") + ".go" }

// Files are what Generate writes, by path from the module's root.
type Files map[string][]byte

// Generate returns the files of a new rule called name, given the current
// analyzer/rules/all.go: the rule's file, all.go with the rule added at
// the end of All, the rule's test, and its scenario directory's README.
func Generate(name string, allGo []byte) (Files, error) {
	if !ruleName.MatchString(name) {
		return nil, fmt.Errorf("rule name %q: want kebab-case, starting with a letter (my-rule)", name)
	}
	v := GoName(name)
	if bytes.Contains(allGo, []byte("\t\t"+v+",\n")) || bytes.Contains(allGo, []byte("// "+v+",\n")) {
		return nil, fmt.Errorf("all.go already lists %s (a rule's name is never reused, even retired)", v)
	}
	const list = "return []*analyzer.Rule{\n"
	i := bytes.Index(allGo, []byte(list))
	if i < 0 {
		return nil, errors.New("all.go: no `return []*analyzer.Rule{` in All")
	}
	j := bytes.Index(allGo[i:], []byte("\n\t}\n"))
	if j < 0 {
		return nil, errors.New("all.go: the list of All does not end with a line `\t}`")
	}
	at := i + j + 1
	all := bytes.Join([][]byte{allGo[:at], []byte("\t\t" + v + ",\n"), allGo[at:]}, nil)
	data := struct{ Name, Var, Title string }{name, v, strings.ReplaceAll(name, "-", " ")}
	out := Files{filepath.ToSlash(filepath.Join(rulesDir, "all.go")): all}
	for path, t := range map[string]*template.Template{
		filepath.Join(rulesDir, FileName(name)):                                       ruleTemplate,
		filepath.Join(rulesDir, strings.TrimSuffix(FileName(name), ".go")+"_test.go"): testTemplate,
		filepath.Join(rulesDir, "testdata", name, "README.md"):                        readmeTemplate,
	} {
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		src := b.Bytes()
		if strings.HasSuffix(path, ".go") {
			var err error
			if src, err = format.Source(src); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		out[filepath.ToSlash(path)] = src
	}
	return out, nil
}

// Write generates the files of rule name under the module's root and
// writes them, refusing to overwrite a file of another rule; it returns
// the paths written, all.go last.
func Write(root, name string) ([]string, error) {
	allPath := filepath.Join(root, rulesDir, "all.go")
	allGo, err := os.ReadFile(allPath)
	if err != nil {
		return nil, fmt.Errorf("read the rule list: %w", err)
	}
	files, err := Generate(name, allGo)
	if err != nil {
		return nil, err
	}
	var paths []string
	for path := range files {
		if path == rulesDir+"/all.go" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, path)); err == nil {
			return nil, fmt.Errorf("%s exists already", path)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if _, err := os.Stat(filepath.Join(root, rulesDir, "testdata", name)); err == nil {
		return nil, fmt.Errorf("%s/testdata/%s exists already", rulesDir, name)
	}
	for _, path := range append(paths, rulesDir+"/all.go") {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, files[path], 0o644); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	return append(paths, rulesDir+"/all.go"), nil
}
