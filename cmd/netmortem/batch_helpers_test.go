package main

import (
	"context"
	"time"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/internal/batch"
	"github.com/netmortem/netmortem/results"
)

// batchResult is a line of batch's output as the tests read it.
type batchResult = batch.Result

// The statuses of a bundle in the batch output.
const (
	statusOK         = results.StatusOK
	statusUnreadable = results.StatusUnreadable
	statusOverBudget = results.StatusOverBudget
	statusTimeout    = results.StatusTimeout
)

// analyzeBundle analyzes one bundle as batch does, with every rule.
func analyzeBundle(ctx context.Context, bundle string, budget time.Duration, maxBytes, maxMemory int64) batch.Result {
	return batch.Bundle(ctx, bundle, &batch.Options{Timeout: budget, MaxBytes: maxBytes, MaxMemory: maxMemory})
}

// configFile is the configuration analyze finds next to a bundle.
const configFile = netmortem.ConfigFile
