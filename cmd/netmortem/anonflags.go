package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/model"
)

// anonymizeOptions are the --anonymize flags of the commands whose
// outputs carry addresses and names.
type anonymizeOptions struct {
	on      bool
	key     string
	keyFile string
	mapping string
}

// keyEnv is the environment variable that gives the anonymization key
// when neither --anonymize-key nor --anonymize-key-file does.
const keyEnv = "NETMORTEM_ANONYMIZE_KEY"

// addAnonymizeFlags adds --anonymize, --anonymize-key,
// --anonymize-key-file and --anonymize-map to fs.
func addAnonymizeFlags(fs *pflag.FlagSet, o *anonymizeOptions) {
	fs.BoolVar(&o.on, "anonymize", false, "replace IP addresses (prefix-preserving), MAC addresses and host, node, pod, namespace and cluster names by stable tokens in every output; Kubernetes system names are kept")
	fs.StringVar(&o.key, "anonymize-key", "", "secret from which the anonymization's tokens are derived, for the same tokens in every run (implies --anonymize; visible to other users in the process list: prefer --anonymize-key-file or "+keyEnv+"); default: a random key, tokens consistent within the run only")
	fs.StringVar(&o.keyFile, "anonymize-key-file", "", "read the anonymization key from the first line of this file (implies --anonymize; --anonymize-key wins over it, and it over "+keyEnv+")")
	fs.StringVar(&o.mapping, "anonymize-map", "", "write the mapping of tokens to the original values, as JSON, to this file (mode 0600; implies --anonymize)")
}

// enabled reports whether any of the flags asks for anonymization. The
// environment variable alone does not: it only gives the key.
func (o anonymizeOptions) enabled() bool {
	return o.on || o.key != "" || o.keyFile != "" || o.mapping != ""
}

// loadKey sets the key when --anonymize-key does not give it: from the
// first line of --anonymize-key-file, else from $NETMORTEM_ANONYMIZE_KEY
// when anonymization is asked for. A key file that cannot be read or
// whose first line is empty is an error.
func (o *anonymizeOptions) loadKey() error {
	switch {
	case o.key != "":
		return nil
	case o.keyFile != "":
		data, err := os.ReadFile(o.keyFile)
		if err != nil {
			return fmt.Errorf("--anonymize-key-file: %w", err)
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		o.key = string(bytes.TrimSuffix(line, []byte("\r")))
		if o.key == "" {
			return fmt.Errorf("--anonymize-key-file: %s:1: %w", o.keyFile, errEmptyKey)
		}
	case o.enabled():
		o.key = os.Getenv(keyEnv)
	}
	return nil
}

// errEmptyKey is the error of a key file whose first line is empty.
var errEmptyKey = errors.New("expected the anonymization key on the first line, found an empty line")

// anonymizer returns the Anonymizer of the options, knowing the names of
// snap; nil when anonymization was not asked for.
func (o anonymizeOptions) anonymizer(snap *model.Snapshot) *netmortem.Anonymizer {
	if !o.enabled() {
		return nil
	}
	return netmortem.NewAnonymizer(o.key, snap)
}

// writeMapping writes what a replaced to o.mapping, when asked for: a
// JSON list of {kind, original, token}, readable by its owner only.
func (o anonymizeOptions) writeMapping(a *netmortem.Anonymizer) error {
	if a == nil {
		return nil
	}
	return o.writeMappings(a.Mappings())
}

// writeMappings writes ms to o.mapping, when asked for, as writeMapping.
func (o anonymizeOptions) writeMappings(ms []netmortem.Mapping) error {
	if o.mapping == "" {
		return nil
	}
	data, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return fmt.Errorf("--anonymize-map: %w", err)
	}
	if err := os.WriteFile(o.mapping, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("--anonymize-map: %w", err)
	}
	return nil
}
