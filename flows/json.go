package flows

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/netmortem/netmortem/model"
)

// writeJSON writes t as a json.Encoder indenting by two spaces writes it,
// byte for byte, but a value at a time: the encoder would hold the whole
// document as text twice (marshalled, then indented), hundreds of MB for
// the hundreds of thousands of attempts of a large capture. The fields
// are Table's, in its order.
func (t *Table) writeJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := t.writeJSONHead(bw); err != nil {
		return err
	}
	switch {
	case t.Attempts == nil:
		bw.WriteString("null")
	case len(t.Attempts) == 0:
		bw.WriteString("[]")
	default:
		var j jsonAttempt
		for i := range t.Attempts {
			if err := writeJSONAttempt(bw, &j, &t.Attempts[i], i == 0); err != nil {
				return err
			}
		}
		bw.WriteString("\n  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// writeJSONHead writes the start of t's JSON form, up to the attempts'
// value.
func (t *Table) writeJSONHead(bw *bufio.Writer) error {
	bw.WriteString("{\n")
	for _, f := range []struct {
		name string
		v    any
	}{{"summary", &t.Summary}, {"captures", &t.Captures}, {"endpoints", &t.Endpoints}} {
		b, err := json.MarshalIndent(f.v, "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString(`  "` + f.name + `": `)
		bw.Write(b)
		bw.WriteString(",\n")
	}
	bw.WriteString(`  "attempts": `)
	return nil
}

// writeJSONAttempt writes a as an element of the attempts' array, the
// first one when first is set, through j.
func writeJSONAttempt(bw *bufio.Writer, j *jsonAttempt, a *model.Attempt, first bool) error {
	b := bw.AvailableBuffer()
	if first {
		b = append(b, "[\n    "...)
	} else {
		b = append(b, ",\n    "...)
	}
	b, err := j.appendJSONAttempt(b, a)
	if err != nil {
		return err
	}
	_, err = bw.Write(b)
	return err
}
