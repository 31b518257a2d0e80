//go:build !fleet

package query

import (
	"context"

	"github.com/netmortem/netmortem/results"
)

// openDB fails with results.ErrNoDatabase: the laptop build carries no
// database client (see db_fleet.go).
func openDB(context.Context, string) (results.Store, error) {
	return nil, results.ErrNoDatabase
}
