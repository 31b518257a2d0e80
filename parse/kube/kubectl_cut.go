package kube

import (
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/parse/format"
)

// jsonDepth reads r and follows its JSON brackets, so that a document the
// YAML decoder fails on can be told cut (brackets still open at the end of
// the text) from malformed. It counts { and [ outside strings; YAML that
// is not JSON is followed too, but only a text that starts with { or [ is
// judged by it.
type jsonDepth struct {
	r       io.Reader
	first   byte // the first byte that is not white space, 0 before it
	depth   int
	inStr   bool
	escaped bool
	line    int // the lines read, counting the last one even without its newline
	eof     bool
}

func (j *jsonDepth) Read(p []byte) (int, error) {
	n, err := j.r.Read(p)
	for _, c := range p[:n] {
		if j.line == 0 {
			j.line = 1
		}
		if c == '\n' {
			j.line++
		}
		if j.first == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			j.first = c
		}
		switch {
		case j.escaped:
			j.escaped = false
		case j.inStr && c == '\\':
			j.escaped = true
		case c == '"':
			j.inStr = !j.inStr
		case j.inStr:
		case c == '{' || c == '[':
			j.depth++
		case c == '}' || c == ']':
			j.depth--
		}
	}
	if err == io.EOF {
		j.eof = true
	}
	return n, err
}

// cut says, once the decoder failed, whether the text is JSON that ends
// with brackets still open: it reads what the decoder left, and returns
// the error to warn with (wrapping format.ErrTruncated), nil when the
// text is not JSON or closes its brackets.
func (j *jsonDepth) cut() error {
	if !j.eof {
		_, _ = io.Copy(io.Discard, j)
	}
	if j.first != '{' && j.first != '[' || j.depth <= 0 {
		return nil
	}
	open := "1 bracket"
	if j.depth > 1 {
		open = fmt.Sprintf("%d brackets", j.depth)
	}
	return fmt.Errorf("%w: the JSON document is not closed: the text ends on line %d with %s open",
		format.ErrTruncated, j.line, open)
}

// listWithoutKind says whether root, a YAML document, is a List kubectl
// printed and the text lost its end: kubectl writes a List's fields in
// order, apiVersion, items, kind, metadata, so a block-style mapping that
// starts with apiVersion and has items but no kind ends inside its items.
// (A List a Go program printed without its kind has no apiVersion
// either.)
func listWithoutKind(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 || len(root.Content) < 4 ||
		root.Content[0].Value != "apiVersion" {
		return false
	}
	items := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "kind":
			return false
		case "items":
			items = true
		}
	}
	return items
}
