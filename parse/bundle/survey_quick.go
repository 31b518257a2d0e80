package bundle

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MayHoldBundles reports whether SurveyDir may find more than one bundle
// in dir, or a folder around them: dir holds a folder (or an entry
// that is neither a folder nor a file), or two files or more that are
// archives or compressed, by their first bytes. A directory of loose
// files says no without a file sniffed, where SurveyDir sniffs each:
// the survey of a thousand small files costs what reading them does.
func MayHoldBundles(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true // SurveyDir says why
	}
	packed := 0
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), ".") {
			continue // SurveyDir passes hidden entries by
		}
		if !de.Type().IsRegular() {
			return true
		}
		if packedFile(filepath.Join(dir, de.Name())) {
			if packed++; packed > 1 {
				return true
			}
		}
	}
	return false
}

// packedFile reports whether the file at p starts as an archive or a
// compressed stream does (a compressed file may hold an archive).
func packedFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false // SurveyDir passes it by too
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return compressionOf(head) != noCompression || isTar(head) || isZip(head)
}
