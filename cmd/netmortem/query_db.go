package main

import (
	"context"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// openDBStore opens the Store of a database sink, to read it.
func openDBStore(ctx context.Context, target string) (results.Store, error) {
	db, err := sqlstore.OpenStore(ctx, target)
	if err != nil {
		return nil, err
	}
	return db, nil
}
