//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives the file at path the owner and group of the file old
// describes, as far as the process may: root keeps both, another user
// the group if it belongs to it. What it may not do is left as created,
// as for any new file.
func keepOwner(path string, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if os.Chown(path, int(st.Uid), int(st.Gid)) != nil {
		_ = os.Chown(path, -1, int(st.Gid))
	}
}
