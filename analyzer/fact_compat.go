package analyzer

import (
	"context"

	"github.com/netmortem/netmortem/model"
)

// Facts is the former name of FactSet.
//
// Deprecated: use FactSet.
type Facts = FactSet

// NewFacts is the former name of NewFactSet.
//
// Deprecated: use NewFactSet.
func NewFacts(snap *model.Snapshot) *FactSet { return NewFactSet(snap) }

// RunFacts is the former name of RunFactSet.
//
// Deprecated: use RunFactSet.
func RunFacts(ctx context.Context, fs *FactSet, rules []*Rule, cfg *Config) Result {
	return RunFactSet(ctx, fs, rules, cfg)
}
