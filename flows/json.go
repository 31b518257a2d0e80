package flows

import (
	"bufio"
	"encoding/json"
	"io"
)

// writeJSON writes t as a json.Encoder indenting by two spaces writes it,
// byte for byte, but a value at a time: the encoder would hold the whole
// document as text twice (marshalled, then indented), hundreds of MB for
// the hundreds of thousands of attempts of a large capture. The fields
// are Table's, in its order.
func (t *Table) writeJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
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
	switch {
	case t.Attempts == nil:
		bw.WriteString("null")
	case len(t.Attempts) == 0:
		bw.WriteString("[]")
	default:
		bw.WriteString("[\n")
		for i := range t.Attempts {
			b, err := json.MarshalIndent(&t.Attempts[i], "    ", "  ")
			if err != nil {
				return err
			}
			bw.WriteString("    ")
			bw.Write(b)
			if i < len(t.Attempts)-1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
