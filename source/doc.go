// Package source lists and opens support bundles stored in object storage,
// by URL, through gocloud.dev/blob: s3:// (AWS S3 and S3-compatible
// servers such as MinIO), gs:// (Google Cloud Storage), azblob:// (Azure
// Blob Storage) and file:// (a local directory, through the same code).
//
// A URL names one object (s3://bucket/tickets/a.tar.gz), every object under
// a prefix (a key ending in "/"), or the objects whose keys match a pattern
// (s3://bucket/tickets/**/*.tar.gz), matched as local globs are. The query,
// if any, holds the bucket's options as gocloud's URL openers read them
// (?endpoint=...&region=...&use_path_style=true for S3) and is no part of
// an object's name. Credentials come from the environment, as each cloud's
// SDK reads them (docs/fleet.md, "Bundles in object storage").
//
// The clients are linked only with the build tag fleet (the fleet build,
// which the container images hold; docs/scale.md, "Two builds"). Without
// it, the laptop build, Cloud is false and every URL is refused with
// ErrNoCloud, which says which build reads it: no cloud SDK, gRPC or
// gocloud package is linked.
//
// Objects are read through Reader, an io.ReaderAt over range requests with
// a sequential read-ahead, which parse.OpenReaderAt reads as it reads a
// file on disk: never the whole object to disk, two GETs for a tar.gz.
//
//	src := source.New()
//	defer src.Close()
//	objs, err := src.List(ctx, "s3://tickets/2026/**/*.tar.gz")
//	for _, o := range objs {
//		r, err := src.OpenObject(ctx, o)
//		snap, warns, err := parse.OpenReaderAt(ctx, o.Name, r, r.Size(), nil)
//		r.Close()
//	}
package source
