package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/netmortem/netmortem/report"
)

// outputUsage is the help of analyze's repeatable -o flag.
var outputUsage = "output format, to standard output, or FORMAT=PATH to write a file; repeat it for several outputs " +
	"(at most one to standard output): " + strings.Join(report.Formats(), ", ")

// writeOutputs writes rep to each output: the files, then standard
// output. It returns an error for each output that failed, naming its -o
// value.
func writeOutputs(stdout io.Writer, outs []report.Output, rep *report.Report) []error {
	var errs []error
	for _, o := range outs {
		if o.Path != "" {
			if err := writeReportFile(o, rep); err != nil {
				errs = append(errs, fmt.Errorf("-o %s: %w", o, err))
			}
		}
	}
	for _, o := range outs {
		if o.Path == "" {
			if err := report.Write(stdout, o.Format, rep); err != nil {
				errs = append(errs, fmt.Errorf("-o %s: %w", o, err))
			}
		}
	}
	return errs
}

// writeReportFile writes rep to o.Path through a temporary file beside it,
// renamed when complete: a reader of the path never sees half a report,
// and a run that fails leaves the file as it was.
func writeReportFile(o report.Output, rep *report.Report) error {
	dir, base := filepath.Split(o.Path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("create %s: %w", o.Path, err)
	}
	defer os.Remove(tmp.Name()) // once renamed, it is gone: nothing to remove
	err = report.Write(tmp, o.Format, rep)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), o.Path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.Path, err)
	}
	return nil
}
