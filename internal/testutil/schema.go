package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema compiles the JSON Schema in file (a path from the repository
// root) registered under url, its $id, so that nothing is fetched: every other
// URL but the JSON Schema drafts' own metaschemas is refused. Formats
// ("uri", "date-time") are asserted.
func Schema(t testing.TB, file, url string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), file))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(offline{})
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// Validate checks the JSON document b against s.
func Validate(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// offline is a loader that loads nothing: the schemas tests use are
// registered before they are compiled.
type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: not loaded (schemas are read from the repository, offline)", url)
}
