package ruledoc

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/netmortem/netmortem/analyzer"
)

// The configuration reference: its text, with the parts read from the
// rules left as template actions; its complete example; and a
// configuration with mistakes, whose errors (as analyzer.LoadConfig gives
// them) the reference shows.
var (
	//go:embed config.md.tmpl
	configDoc string
	//go:embed config_example.yaml
	configExample string
	//go:embed config_errors.yaml
	configErrors string
)

// configTemplate is configDoc, parsed.
var configTemplate = template.Must(template.New("config.md").Parse(configDoc))

// ConfigKeys lists every key of the configuration file, which the
// reference WriteConfig writes names.
func ConfigKeys() []string {
	return slices.Concat(analyzer.ConfigKeys, analyzer.RuleConfigKeys, analyzer.IgnoreKeys)
}

// WriteConfig writes the reference of the configuration file
// (docs/config.md) for the rules rs: its keys, the rules' parameters (from
// their Params), the keys of their subjects that ignore entries select on,
// baselines and the exit codes that depend on them. rs must hold the rules
// the example names.
func WriteConfig(w io.Writer, rs []*analyzer.Rule) error {
	errs, err := exampleErrors(rs)
	if err != nil {
		return err
	}
	var params, subjects []string
	for _, r := range rs {
		for _, p := range r.Params {
			params = append(params, fmt.Sprintf("| [`%s`](rules/%s.md) | `%s` | %s | %s | %s | %s |", r.Name, r.Name, p.Name, p.Type,
				p.Range, strconv.FormatFloat(p.Default, 'g', -1, 64), p.Doc))
		}
		subjects = append(subjects, fmt.Sprintf("| [`%s`](rules/%s.md) | %s |", r.Name, r.Name, "`"+strings.Join(r.SubjectKeys, "`, `")+"`"))
	}
	var b bytes.Buffer
	err = configTemplate.Execute(&b, map[string]any{
		"Errors":      errs,
		"Params":      params,
		"Subjects":    subjects,
		"ObjectKinds": objectKinds(rs),
		"Example":     configExample,
	})
	if err != nil {
		return fmt.Errorf("configuration reference: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// exampleErrors is what analyze says of configErrors, as the reference
// shows it: its first rule is the name of rs's first rule misspelt (a
// letter left out), which the loader's suggestion corrects.
func exampleErrors(rs []*analyzer.Rule) (string, error) {
	if len(rs) == 0 {
		return "", errors.New("configuration reference: no rule")
	}
	var src strings.Builder
	t := template.Must(template.New("config_errors.yaml").Parse(configErrors))
	if err := t.Execute(&src, map[string]string{"Misspelt": misspell(rs[0].Name)}); err != nil {
		return "", fmt.Errorf("configuration reference: %w", err)
	}
	_, err := analyzer.LoadConfig(strings.NewReader(src.String()), ".netmortem.yaml", rs)
	if err == nil {
		return "", errors.New("configuration reference: the example of errors loads without any")
	}
	lines := strings.Split(err.Error(), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "    netmortem analyze: the configuration has %d errors:", len(lines))
	for _, l := range lines {
		b.WriteString("\n    " + l)
	}
	return b.String(), nil
}

// misspell leaves out the letter before name's last: "synack-rest" for
// "synack-reset".
func misspell(name string) string {
	r := []rune(name)
	if len(r) < 2 {
		return name + name
	}
	return string(append(r[:len(r)-2:len(r)-2], r[len(r)-1]))
}

// objectKinds lists the kinds of object the subjects of rs name:
// "`Pod`, `Service`".
func objectKinds(rs []*analyzer.Rule) string {
	var kinds []string
	for _, r := range rs {
		kinds = append(kinds, r.ObjectKinds...)
	}
	slices.Sort(kinds)
	return "`" + strings.Join(slices.Compact(kinds), "`, `") + "`"
}
