package bundle

import (
	"archive/tar"
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// tarTree is a tar archive whose (decompressed) stream open returns.
type tarTree struct {
	open func() (io.Reader, func(), error)
	b    *budget
}

func (t tarTree) walk(ctx context.Context, fn func(e *entry) error) error {
	r, done, err := t.open()
	if err != nil {
		return err
	}
	defer done()
	tr := tar.NewReader(r)
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if n++; n > t.b.lim.MaxEntries {
			return limitErr("archive has more than %d members (Limits.MaxEntries); rest not read", t.b.lim.MaxEntries)
		}
		name, bad := cleanMember(h.Name)
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: h.Size, link: h.Linkname, bad: bad}
		switch h.Typeflag {
		case tar.TypeReg:
			e.kind = entFile
			e.open = func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }
		case tar.TypeDir:
			e.kind = entDir
		case tar.TypeSymlink:
			e.kind = entSymlink
		case tar.TypeLink:
			e.kind = entHardlink
		case tar.TypeXGlobalHeader:
			continue
		default:
			e.kind = entOther
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// zipTree is a zip archive read through an io.ReaderAt.
type zipTree struct {
	ra   io.ReaderAt
	size int64
	b    *budget
}

func (z zipTree) walk(ctx context.Context, fn func(e *entry) error) error {
	zr, err := zip.NewReader(z.ra, z.size)
	if err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	if len(zr.File) > z.b.lim.MaxEntries {
		return limitErr("archive has more than %d members (Limits.MaxEntries); not read", z.b.lim.MaxEntries)
	}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, bad := cleanMember(strings.ReplaceAll(f.Name, "\\", "/"))
		if name == "" && bad == nil {
			continue
		}
		e := &entry{name: name, size: int64(f.UncompressedSize64), bad: bad}
		mode := f.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			e.kind = entDir
		case mode&fs.ModeSymlink != 0:
			e.kind = entSymlink
			if rc, err := f.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 4096))
				rc.Close()
				e.link = string(b)
			}
		case mode.IsRegular():
			e.kind = entFile
			e.inflated = true
			f := f
			e.open = func() (io.ReadCloser, error) {
				if f.CompressedSize64 > 0 && int64(f.UncompressedSize64) > ratioFloor &&
					int64(f.UncompressedSize64/f.CompressedSize64) > z.b.lim.MaxRatio {
					return nil, limitErr("member declares %d times its compressed size (Limits.MaxRatio): likely a decompression bomb; not read", f.UncompressedSize64/f.CompressedSize64)
				}
				return f.Open()
			}
		default:
			e.kind = entOther
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
