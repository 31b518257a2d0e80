package results

import "errors"

// ErrNoDatabase is the error of a results database (a SQLite file, a
// postgres:// URL) in the laptop build, which keeps results in JSON Lines
// only: the database clients (modernc.org/sqlite, pgx) come with the fleet
// build (go build -tags fleet), as the object-storage clients do.
var ErrNoDatabase = errors.New("this build of netmortem (the laptop build) keeps results in JSON Lines (--out), " +
	"not in a database (SQLite, PostgreSQL); the fleet build does: " +
	"go install -tags fleet github.com/netmortem/netmortem/cmd/netmortem@latest, " +
	"or the container image ghcr.io/netmortem/netmortem (docs/scale.md)")
