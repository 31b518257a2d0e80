package main

import (
	"context"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// openDBStore opens the Store of a database sink.
func openDBStore(ctx context.Context, target string) (results.Store, error) {
	return sqlstore.OpenStore(ctx, target)
}
