package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// SysctlJSON parses a JSON object mapping sysctl names to values, as
// troubleshoot's host sysctl collector writes it
// (host-collectors/system/sysctl.json: `{"net.ipv4.ip_local_port_range":"32768\t60999",...}`).
// Numbers are read as their text. Positions carry the line and column of
// each key. A value that is not a string or number is reported and skipped.
func SysctlJSON(r io.Reader, name string) ([]model.Sysctl, error) {
	return format.ReadAll(r, name, readSysctlJSON)
}

// maxJSON bounds how much of a JSON input is read into memory.
const maxJSON = 256 << 20

func readSysctlJSON(r io.Reader, src *format.File, errs *model.ErrorList) []model.Sysctl {
	name := src.Name
	data, err := io.ReadAll(io.LimitReader(r, maxJSON+1))
	if err != nil {
		errs.Add(model.Pos{File: name}, "", err)
		return nil
	}
	if len(data) > maxJSON {
		errs.Addf(model.Pos{File: name}, "", "%w: JSON larger than %d MiB", format.ErrValue, maxJSON>>20)
		return nil
	}
	pos := newOffsets(name, data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		errs.Addf(pos.at(skipJSONSpace(data, 0)), "", "%w: expected a JSON object of sysctl names", format.ErrSyntax)
		return nil
	}
	var out []model.Sysctl
	for dec.More() {
		start := skipJSONSpace(data, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			errs.Add(pos.at(start), "", jsonErr(err))
			return out
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			errs.Add(pos.at(start), "", jsonErr(err))
			return out
		}
		var value string
		switch {
		case len(raw) > 0 && raw[0] == '"':
			_ = json.Unmarshal(raw, &value)
		case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
			value = string(raw)
		default:
			errs.Addf(pos.at(start), "", "%w: expected a string value for %q", format.ErrValue, key)
			continue
		}
		if !validSysctlName(key) {
			errs.Addf(pos.at(start), "", "%w: %q is not a sysctl name", format.ErrValue, key)
			continue
		}
		out = append(out, model.Sysctl{Node: src.Node, Name: key, Value: text.CollapseSpace(value), Pos: pos.at(start)})
	}
	if _, err := dec.Token(); err != nil {
		errs.Add(pos.at(int(dec.InputOffset())), "", jsonErr(err))
	}
	return out
}

func jsonErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: JSON ends early", format.ErrTruncated)
	}
	return fmt.Errorf("%w: %v", format.ErrSyntax, err)
}

// skipJSONSpace returns the offset of the first byte at or after off that is
// not JSON whitespace or a separator.
func skipJSONSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// offsets turns byte offsets of an in-memory input into line:column
// positions.
type offsets struct {
	name  string
	lines []int // offset of the start of each line
}

func newOffsets(name string, data []byte) *offsets {
	o := &offsets{name: name, lines: []int{0}}
	for i, b := range data {
		if b == '\n' {
			o.lines = append(o.lines, i+1)
		}
	}
	return o
}

func (o *offsets) at(off int) model.Pos {
	lo, hi := 0, len(o.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if o.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return model.Pos{File: o.name, Line: lo + 1, Col: off - o.lines[lo] + 1}
}

// sysctlJSONKeyRe matches the opening of a sysctl JSON map: '{' and a first
// key in a known top-level directory with a string value.
var sysctlJSONKeyRe = lazyre.New(`^\{\s*"(?:abi|crypto|debug|dev|fs|kernel|net|sunrpc|user|vm)\.[^"\s]+"\s*:\s*"`)

func sniffSysctlJSON(_ string, head []byte) int {
	if sysctlJSONKeyRe.Match(bytes.TrimLeft(head, " \t\r\n\ufeff")) {
		return 90
	}
	return 0
}

// SysctlJSONFormat reads the JSON of troubleshoot's host sysctl collector.
var SysctlJSONFormat = &format.Format{
	Name:    "sysctl-json",
	Kind:    model.KindSysctl,
	Command: "troubleshoot host collector host-collectors/system/sysctl.json",
	Doc: "a JSON object of sysctl names and values (`{\"net.ipv4.ip_local_port_range\":\"32768\\t60999\",...}`); " +
		"numbers are read as their text; positions carry each key's line and column; a value that is " +
		"neither a string nor a number is a warning",
	Sniff: sniffSysctlJSON,
	Parse: format.Records(readSysctlJSON, func(s *model.Snapshot, out []model.Sysctl) { s.Sysctls = append(s.Sysctls, out...) }, ""),
}
