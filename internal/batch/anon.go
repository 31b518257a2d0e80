package batch

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/netmortem/netmortem/internal/anon"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/results"
)

// Anon anonymizes the lines of batch --anonymize. Each line is
// anonymized by an Anonymizer of its own, made from the batch's key and
// knowing the names of its own bundle only, so that a line does not
// depend on which bundles were analyzed before it: with a given key, a
// resumed batch, a shard or a run with other --jobs writes the lines a
// single run writes. The mappings of all the lines are gathered for
// --anonymize-map.
type Anon struct {
	key  string
	mu   sync.Mutex
	used map[string]anon.Mapping // kind, original -> its mapping
}

// NewAnon returns the Anon of key; an empty key is replaced by
// a random one, shared by every line of the batch.
func NewAnon(key string) *Anon {
	if key == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
		key = hex.EncodeToString(b)
	}
	return &Anon{key: key, used: map[string]anon.Mapping{}}
}

// forBundle is the Anonymizer of one bundle, knowing snap's names.
func (b *Anon) forBundle(snap *model.Snapshot) *anon.Anonymizer {
	a := anon.New(b.key)
	a.Learn(snap)
	return a
}

// bundleName is how a line names bundle when its bundle could not be
// read: with its addresses replaced, and no name known. A bundle read is
// named with its own names replaced too (a node's name in a sosreport's
// file name).
func (b *Anon) bundleName(bundle string) string {
	return anon.New(b.key).Text(bundle)
}

// LineName is how a line names bundle: its path (results.BundleName), or
// with --anonymize its path anonymized, as far as it can be without reading the bundle.
func (o *Options) LineName(bundle string) string {
	name := results.BundleName(bundle)
	if o == nil || o.Anon == nil {
		return name
	}
	return o.Anon.bundleName(name)
}

// result returns res anonymized by its bundle's Anonymizer (one knowing
// no name when the bundle was not read), and notes the mappings used.
func (b *Anon) result(res Result) Result {
	a := res.anon
	if a == nil {
		a = anon.New(b.key)
	}
	out := anon.Apply(a, res)
	out.anon = nil
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range a.Mappings() {
		b.used[m.Kind+"\x00"+m.Original] = m
	}
	return out
}

// Keep adds the mappings of the file path, written by the run a resumed
// batch resumes (--anonymize-map), so that the file written at the end
// still holds those of the lines written then. A file that does not exist
// holds none.
func (b *Anon) Keep(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--anonymize-map: %w", err)
	}
	var ms []anon.Mapping
	if err := json.Unmarshal(data, &ms); err != nil {
		return fmt.Errorf("--anonymize-map: %s: expected the JSON list of an earlier run's mapping: %w", path, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range ms {
		b.used[m.Kind+"\x00"+m.Original] = m
	}
	return nil
}

// Mappings lists what the lines replaced, by kind and original.
func (b *Anon) Mappings() []anon.Mapping {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]anon.Mapping, 0, len(b.used))
	for _, m := range b.used {
		out = append(out, m)
	}
	anon.SortMappings(out)
	return out
}
