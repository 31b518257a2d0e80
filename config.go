package netmortem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/parse/bundle"
	"github.com/netmortem/netmortem/report"
)

// ConfigFile is the configuration found next to a bundle when none is
// given (docs/config.md).
const ConfigFile = bundle.ConfigFile

// FindConfig returns the first ConfigFile in the directory of a bundle of
// paths (a bundle directory itself, or the directory of an archive or file
// given; stdin, "-", is read as a file of the current directory), and
// whether there is one.
func FindConfig(paths []string) (string, bool) {
	for _, p := range paths {
		if p == "-" {
			p = "."
		}
		dir := filepath.Dir(p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			dir = p
		}
		c := filepath.Join(dir, ConfigFile)
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}

// ReadBaseline reads the fingerprints of the findings of an earlier run:
// a report written by analyze -o json, or the lines of batch's output
// (every bundle's findings). The findings that report had suppressed
// count too: its suppressed_fingerprints (and the suppressed findings it
// lists, with --show-suppressed).
func ReadBaseline(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	fps := map[string]bool{}
	values := 0
	for {
		var v struct {
			Findings               *[]analyzer.Finding   `json:"findings"`
			Suppressed             []analyzer.Suppressed `json:"suppressed"`
			SuppressedFingerprints []string              `json:"suppressed_fingerprints"`
		}
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (want the JSON of netmortem analyze -o json, or batch lines)", jsonErrPos(path, err), err)
		}
		values++
		if v.Findings == nil {
			return nil, fmt.Errorf("%s: value %d has no findings (want the JSON of netmortem analyze -o json, or batch lines)", path, values)
		}
		for _, x := range *v.Findings {
			if x.Fingerprint == "" {
				return nil, fmt.Errorf("%s: a finding of %s without a fingerprint: written by a netmortem without fingerprints; analyze the baseline bundle again", path, x.Rule)
			}
			fps[x.Fingerprint] = true
		}
		for _, x := range v.Suppressed {
			fps[x.Fingerprint] = true
		}
		for _, fp := range v.SuppressedFingerprints {
			fps[fp] = true
		}
	}
	if values == 0 {
		return nil, fmt.Errorf("%s: empty (want the JSON of netmortem analyze -o json)", path)
	}
	return fps, nil
}

// jsonErrPos is path:LINE:COL of a JSON decoding error in the file at
// path: where the syntax breaks, the value of the wrong type, or the end
// of a file that ends too soon; path alone when the error does not say.
func jsonErrPos(path string, err error) string {
	var at int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		at = syn.Offset
	case errors.As(err, &typ):
		at = typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		at = -1 // the end of the file
	default:
		return path
	}
	b, rerr := os.ReadFile(path)
	if at < 0 {
		at = int64(len(b))
	}
	if rerr != nil || at > int64(len(b)) {
		return path
	}
	b = b[:at]
	line, col := 1+bytes.Count(b, []byte("\n")), len(b)-bytes.LastIndexByte(b, '\n')
	if at == 0 {
		col = 1
	}
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}

// Suppress leaves out of res the findings that cfg's ignore entries and
// the baseline (the fingerprints of ReadBaseline, from the file
// baselineName) select, and returns them, with the warnings of expired
// entries as report warnings.
func Suppress(res *analyzer.Result, cfg *analyzer.Config, baseline map[string]bool, baselineName string, now time.Time) ([]analyzer.Suppressed, []report.Warning) {
	kept, sup, expired := cfg.Suppress(res.Findings, now)
	if baseline != nil {
		var more []analyzer.Suppressed
		kept, more = analyzer.SuppressBaseline(kept, baseline, baselineName)
		sup = append(sup, more...)
	}
	res.Findings = kept
	var warns []report.Warning
	for _, e := range expired {
		warns = append(warns, report.Warning{Position: e.Pos.String(), Pos: e.Pos, Message: e.Message})
	}
	return sup, warns
}

// ConfigError is a configuration file that could not be read or holds
// errors: each of Errs says "file:line: what was expected".
type ConfigError struct{ Errs []error }

func (e *ConfigError) Error() string { return errors.Join(e.Errs...).Error() }

// Unwrap returns Errs.
func (e *ConfigError) Unwrap() []error { return e.Errs }

// loadConfig reads the configuration file path for the rules all.
func loadConfig(path string, all []*analyzer.Rule) (*analyzer.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &OptionError{Option: "config", Err: err}
	}
	defer f.Close()
	cfg, err := analyzer.LoadConfig(f, path, all)
	if err != nil {
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		return nil, &ConfigError{errs}
	}
	return cfg, nil
}

// OptionError is an option that cannot be used as given: a configuration
// or a baseline that cannot be read, an unknown rule.
type OptionError struct {
	// Option names it as the CLI's flag does, without the dashes:
	// "config", "baseline", "enable".
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// SelectRules returns the rules to run and their configuration: all (nil:
// rules.All()) with the configuration file config ("" for none) applied,
// then enable (only these, even when the configuration disables them) and
// disable. A rule name that all lacks is an *OptionError wrapping an
// *UnknownRuleError.
func SelectRules(all []*analyzer.Rule, config string, enable, disable []string) ([]*analyzer.Rule, *analyzer.Config, error) {
	if all == nil {
		all = rules.All()
	}
	cfg := &analyzer.Config{}
	if config != "" {
		var err error
		if cfg, err = loadConfig(config, all); err != nil {
			return nil, nil, err
		}
	}
	known := map[string]*analyzer.Rule{}
	for _, r := range all {
		known[r.Name] = r
	}
	for i, n := range append(append([]string{}, enable...), disable...) {
		if known[n] == nil {
			opt := "enable"
			if i >= len(enable) {
				opt = "disable"
			}
			return nil, nil, &OptionError{Option: opt, Err: &UnknownRuleError{Name: n}}
		}
	}
	selected := all
	if len(enable) > 0 {
		selected = nil
		for _, n := range enable {
			selected = append(selected, known[n])
		}
		cfg.Enable(enable...) // enable wins over the configuration's disabled
	}
	cfg.Disable(disable...)
	return selected, cfg, nil
}

// UnknownRuleError is a rule name that no rule has.
type UnknownRuleError struct{ Name string }

func (e *UnknownRuleError) Error() string { return fmt.Sprintf("unknown rule %q", e.Name) }

// enabledRules returns the rules of the list that cfg does not disable:
// those that ran.
func enabledRules(rules []*analyzer.Rule, cfg *analyzer.Config) []*analyzer.Rule {
	var out []*analyzer.Rule
	for _, r := range rules {
		if r != nil && (cfg == nil || !cfg.Rules[r.Name].Disabled) {
			out = append(out, r)
		}
	}
	return out
}
