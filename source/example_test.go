//go:build fleet

package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/source"
)

// Bundles listed by a pattern and read in place, here from a local
// directory through file://; s3://, gs:// and azblob:// are read the
// same way.
func Example() {
	dir, _ := os.MkdirTemp("", "bundles")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "tickets", "2026"), 0o755)
	os.WriteFile(filepath.Join(dir, "tickets", "2026", "sysctl.txt"), []byte("net.ipv4.ip_forward = 1\n"), 0o644)

	ctx := context.Background()
	src := source.New()
	defer src.Close()
	objs, err := src.List(ctx, "file://"+dir+"/tickets/**/*.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		r, err := src.OpenObject(ctx, o)
		if err != nil {
			fmt.Println(err)
			return
		}
		snap, _, err := parse.OpenReaderAt(ctx, o.Name, r, r.Size(), nil)
		r.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		in := snap.Inputs[0]
		fmt.Println(filepath.Base(o.Name), in.Format, r.Requests(), "request")
	}
	// Output: sysctl.txt sysctl 1 request
}
