package bundle_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// cutWarning returns the warning on dst that says the archive was not
// read to its end, or "".
func cutWarning(warns model.ErrorList, dst string) string {
	for _, w := range warns {
		if w.Pos.File == dst && strings.Contains(w.Error(), "archive not read to its end") {
			return w.Error()
		}
	}
	return ""
}

// A tar archive cut exactly at a member's boundary is a valid prefix of
// tar blocks, which Go's tar reader (as GNU tar) reads to an io.EOF as if
// it were whole: without the two zero blocks that end an archive it is
// said to be cut, after which member. A gzip stream whose checksum fails,
// or that lacks its trailer, after the archive's end is said to be too.
// The whole archive, plain or compressed, gives no warning.
func TestTarEnd(t *testing.T) {
	members := []member{
		{name: "a/sysctl.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
		{name: "a/more.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
	}
	full := writeTar(t, members)
	first := writeTar(t, members[:1])
	boundary := first[:len(first)-2*512] // one member, no end blocks
	if len(boundary)%512 != 0 {
		t.Fatalf("boundary cut of %d bytes is not in blocks", len(boundary))
	}
	badCRC := gz(full)
	badCRC[len(badCRC)-8] ^= 0xff
	zfull := gz(full)
	for _, tc := range []struct {
		name string
		data []byte
		want string // part of the warning, "" for none
	}{
		{"whole.tar", full, ""},
		{"whole.tar.gz", zfull, ""},
		{"boundary.tar", boundary, `ends after member "a/sysctl.txt" without tar's end-of-archive blocks`},
		{"boundary.tar.gz", gz(boundary), `ends after member "a/sysctl.txt" without tar's end-of-archive blocks`},
		{"empty.tar", []byte{}, ""}, // not an archive at all: read as an empty file
		{"crc.tar.gz", badCRC, "gzip: invalid checksum"},
		{"trailer.tar.gz", zfull[:len(zfull)-4], "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(dst, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			snap, warns := open(t, dst, nil)
			got := cutWarning(warns, dst)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("warning on a whole archive: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("warning %q, want one containing %q (all: %v)", got, tc.want, warns)
			}
			if tc.name != "empty.tar" {
				if in := inputs(snap, dst+"!")["a/sysctl.txt"]; in.Records != 2 {
					t.Errorf("the first member was not read: %+v", in)
				}
			}
		})
	}
}
