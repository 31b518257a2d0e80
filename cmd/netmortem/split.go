package main

import (
	"context"
	"errors"
	"io"

	"github.com/netmortem/netmortem/internal/batch"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/parse/bundle"
)

// splitOperands applies batch.SplitOperand to every operand of a batch,
// writing its notes on stderr, fitted to its width, unless quiet. The
// error is the first directory that cannot be split safely.
func splitOperands(ctx context.Context, operands []string, stderr io.Writer, quiet bool) ([]string, error) {
	var bundles []string
	for _, op := range operands {
		s, err := batch.SplitOperand(ctx, op)
		if err != nil {
			return nil, err
		}
		if s.Note != "" && !quiet {
			fprintfFitted(stderr, outputWidth(stderr), "netmortem batch: %s\n", s.Note)
		}
		bundles = append(bundles, s.Bundles...)
	}
	return bundles, nil
}

// noteMerged says on stderr, for analyze, which directory operands hold
// several bundles, which are then analyzed as one.
func noteMerged(ctx context.Context, operands []string, stderr io.Writer) {
	for _, op := range operands {
		if !bundle.MayHoldBundles(op) {
			continue // loose files: told without sniffing each
		}
		s, err := batch.SplitOperand(ctx, op)
		held := s.Bundles
		if mixed := (*batch.MixedError)(nil); errors.As(err, &mixed) {
			held = mixed.Bundles
		}
		if len(held) < 2 {
			continue
		}
		escape.Fprintf(stderr, "netmortem analyze: %s holds %d bundles (%s), analyzed here as one; "+
			"if they are not one incident's, netmortem batch analyzes each on its own\n", op, len(held), batch.Names(op, held))
	}
}
