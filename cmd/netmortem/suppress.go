package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/parse/bundle"
	"github.com/netmortem/netmortem/report"
)

// configFile is the configuration found next to a bundle when --config is
// not given.
const configFile = bundle.ConfigFile

// never is the --fail-on level no finding reaches.
const never = analyzer.Error + 1

// parseFailOn reads a --fail-on value: a severity, or never (exit 0
// whatever the findings, as long as everything was read).
func parseFailOn(s string) (analyzer.Severity, error) {
	if strings.EqualFold(strings.TrimSpace(s), "never") {
		return never, nil
	}
	sev, err := analyzer.ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("unknown level %q (want never, info, warning or error)", s)
	}
	return sev, nil
}

// findConfig returns the configuration to use: the one given, or the
// first .netmortem.yaml in the directory of a bundle of paths (a bundle
// directory itself, or the directory of an archive or file given), and
// whether it was found that way.
func findConfig(given string, paths []string) (string, bool) {
	if given != "" {
		return given, false
	}
	for _, p := range paths {
		if p == "-" {
			p = "." // stdin (-) is read as a file of the current directory
		}
		dir := filepath.Dir(p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			dir = p
		}
		c := filepath.Join(dir, configFile)
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}

// readBaseline reads the fingerprints of the findings of an earlier run:
// a report written by analyze -o json, or the lines of batch's output
// (every bundle's findings). The findings that report had suppressed
// count too: its suppressed_fingerprints (and the suppressed findings it
// lists, with --show-suppressed).
func readBaseline(path string) (map[string]bool, error) {
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
			return nil, fmt.Errorf("%s: %w (want the JSON of netmortem analyze -o json, or batch lines)", path, err)
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

// suppress leaves out of res the findings that cfg's ignore entries and
// the baseline select, and returns them, with the warnings of expired
// entries as report warnings.
func suppress(res *analyzer.Result, cfg *analyzer.Config, baseline map[string]bool, baselineName string, now time.Time) ([]analyzer.Suppressed, []report.Warning) {
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

// sayUnmatched writes on stderr, one line each, the ignore entries of cfg
// that suppressed none of sup: not an error (the problem an entry was
// written for may be gone), but worth removing, or a selector is wrong.
func sayUnmatched(stderr io.Writer, cfg *analyzer.Config, sup []analyzer.Suppressed, now time.Time) {
	for _, w := range cfg.Unmatched(sup, now) {
		escape.Fprintf(stderr, "note: %s\n", w)
	}
}

// configErrors is the errors of a configuration file, each "file:line:
// what was expected".
type configErrors struct{ errs []error }

func (e *configErrors) Error() string { return errors.Join(e.errs...).Error() }

// loadConfig reads the configuration file path for the rules all.
func loadConfig(path string, all []*analyzer.Rule) (*analyzer.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	cfg, err := analyzer.LoadConfig(f, path, all)
	if err != nil {
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		return nil, &configErrors{errs}
	}
	return cfg, nil
}

// sayError writes err of command cmd on stderr: a configuration's errors
// after a line that names the command, each on its own line starting with
// file:line (as editors and CI annotations read them); any other error on
// one line "netmortem cmd: error".
func sayError(stderr io.Writer, cmd string, err error) {
	var ce *configErrors
	if !errors.As(err, &ce) {
		escape.Fprintln(stderr, "netmortem "+cmd+":", err)
		return
	}
	fmt.Fprintf(stderr, "netmortem %s: the configuration has %s:\n", cmd, count(len(ce.errs), "error"))
	for _, e := range ce.errs {
		escape.Fprintln(stderr, e.Error())
	}
}

// sayConfig tells which configuration a command uses.
func sayConfig(stderr io.Writer, cmd, path string, found bool) {
	if path == "" {
		return
	}
	how := "--config"
	if found {
		how = "found next to the bundle"
	}
	escape.Fprintf(stderr, "netmortem %s: configuration %s (%s)\n", cmd, path, how)
}
