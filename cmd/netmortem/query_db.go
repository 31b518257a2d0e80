package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/netmortem/netmortem/results"
	"github.com/netmortem/netmortem/results/sqlstore"
)

// openDBStore opens the Store of a database sink, to read it. A JSON Lines
// file given to --db is named as such, with where it goes instead.
func openDBStore(ctx context.Context, target string) (results.Store, error) {
	db, err := sqlstore.OpenStore(ctx, target)
	if err != nil {
		if jsonLines(target) {
			return nil, fmt.Errorf("%s holds JSON Lines, not a database: give it as an argument, without --db (netmortem query rules %s)", target, target)
		}
		return nil, err
	}
	return db, nil
}

// jsonLines reports whether the file path starts as a batch's JSON Lines
// do.
func jsonLines(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte(`{"`))
}
