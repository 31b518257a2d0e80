//go:build fleet

package query

import (
	"context"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// openDB opens the Store of the results database db (a SQLite file or a
// postgres:// URL) for reading.
func openDB(ctx context.Context, db string) (results.Store, error) {
	return sqlstore.OpenStore(ctx, db)
}
