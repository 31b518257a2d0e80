package format

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/model"
)

// ReadFunc reads the records of one input, adding the problems it meets to
// errs.
type ReadFunc[T any] func(r io.Reader, src *File, errs *model.ErrorList) []T

// Records makes a Format's Parse from a reader of records: what read
// returns is added to the snapshot by add and, unless detail is empty,
// counted in the file's details under detail.
func Records[T any](read ReadFunc[T], add func(*model.Snapshot, []T), detail string) func(context.Context, io.Reader, *File, *model.Snapshot) (int, error) {
	return func(_ context.Context, r io.Reader, src *File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		out := read(r, src, &errs)
		add(snap, out)
		if detail != "" {
			src.Count(detail, len(out))
		}
		return len(out), errs.Err()
	}
}

// ReadAll runs read over r, for the exported reader of a format (Routes,
// Neighbors ...): name is used in positions only.
func ReadAll[T any](r io.Reader, name string, read ReadFunc[T]) ([]T, error) {
	var errs model.ErrorList
	out := read(r, &File{Name: name}, &errs)
	return out, errs.Err()
}
