//go:build fleet

package batch

import (
	"context"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// openDB opens the results database db (a SQLite file or a postgres://
// URL), its schema brought up to date.
func openDB(ctx context.Context, db string) (results.Sink, error) {
	return sqlstore.Open(ctx, db)
}
