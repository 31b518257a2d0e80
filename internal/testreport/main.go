// Command testreport prints what `go test -json` reports as go test would
// print it, then says which tests were skipped and why, one line per
// reason: a skipped group (a server not installed, the shared corpus
// absent) is said at the end of `make test`, not only under -v.
//
//	go test -json ./... | go run ./internal/testreport
//
// It exits 1 when a test, a package or a build failed, or when the input
// held no test event at all.
package main

import (
	"fmt"
	"os"
)

func main() {
	sum, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
	sum.write(os.Stdout)
	if sum.failed > 0 || sum.events == 0 {
		os.Exit(1)
	}
}
