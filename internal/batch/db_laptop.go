//go:build !fleet

package batch

import (
	"context"

	"github.com/netmortem/netmortem/results"
)

// openDB fails with results.ErrNoDatabase: the laptop build carries no
// database client (see db_fleet.go).
func openDB(context.Context, string) (results.Sink, error) {
	return nil, results.ErrNoDatabase
}
