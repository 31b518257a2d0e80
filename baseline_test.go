package netmortem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A baseline that is not the JSON of a report is refused with the place
// in the file where it goes wrong: its syntax, a value of the wrong type,
// an end too soon.
func TestReadBaselineErrorPosition(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, at string }{
		{"{\"findings\": [\n", ":2:1: unexpected EOF"},
		{"{\"findings\": []}\n{\"findings\": [}\n", ":2:16: invalid character '}'"},
		{"{\"findings\": [{\"rule\": 5}]}", ":1:25: json: cannot unmarshal number"},
	} {
		path := filepath.Join(dir, "base.json")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadBaseline(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+c.at) {
			t.Errorf("%q: %v, want %s%s", c.text, err, path, c.at)
		}
	}
}
