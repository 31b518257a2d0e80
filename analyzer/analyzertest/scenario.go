package analyzertest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// UseFile is the name of the file of a scenario that lists the evidence
// it shares with other directories of the repository.
const UseFile = "use.txt"

// A use is one line of a scenario's use.txt: the file at Path (relative
// to the scenario directory) held in the scenario as Name.
type use struct {
	Path, Name string
	line       int
}

// readUses reads the use.txt of the scenario directory dir; it returns
// none when there is none.
func readUses(dir string) ([]use, error) {
	b, err := os.ReadFile(filepath.Join(dir, UseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []use
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, name, renamed := strings.Cut(line, " as ")
		p, name = strings.TrimSpace(p), strings.TrimSpace(name)
		if !renamed {
			name = path.Base(p)
		}
		if p == "" || strings.ContainsAny(p, " \t") || name == "" || path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "..") ||
			name == WantFile || name == UseFile {
			return nil, fmt.Errorf("%s:%d: %q: write a path relative to the scenario, then \"as NAME\" for another name in it", filepath.Join(dir, UseFile), n, line)
		}
		out = append(out, use{Path: p, Name: path.Clean(name), line: n})
	}
	return out, sc.Err()
}

// EvidenceDir returns a directory holding the evidence of the scenario at
// dir, each file under its name in the scenario: dir itself when it
// shares no evidence, else a new directory (removed when t ends) of the
// same base name holding dir's own files but want.yaml and use.txt, and a
// copy of each file its use.txt names. Tests that read a scenario's
// evidence otherwise than through Run get it here.
func EvidenceDir(t testing.TB, dir string) string {
	t.Helper()
	out, err := evidence(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// evidence gathers the evidence of the scenario at dir under tmp.
func evidence(dir, tmp string) (string, error) {
	uses, err := readUses(dir)
	if err != nil || len(uses) == 0 {
		return dir, err
	}
	out := filepath.Join(tmp, filepath.Base(filepath.Clean(dir)))
	held := map[string]string{} // name in the scenario: where it comes from
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if name == WantFile || name == UseFile {
			return nil
		}
		held[filepath.ToSlash(name)] = p
		return copyFile(p, filepath.Join(out, name))
	})
	if err != nil {
		return "", fmt.Errorf("scenario %s: %w", dir, err)
	}
	for _, u := range uses {
		src := filepath.Join(dir, filepath.FromSlash(u.Path))
		if prev, ok := held[u.Name]; ok {
			return "", fmt.Errorf("%s:%d: %s is both %s and %s", filepath.Join(dir, UseFile), u.line, u.Name, prev, src)
		}
		held[u.Name] = src
		if err := copyFile(src, filepath.Join(out, filepath.FromSlash(u.Name))); err != nil {
			return "", fmt.Errorf("%s:%d: %w", filepath.Join(dir, UseFile), u.line, err)
		}
	}
	return out, nil
}

// copyFile copies the regular file src to dst, making dst's directory.
func copyFile(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", src)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
