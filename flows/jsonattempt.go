package flows

import (
	"encoding/json"
	"net/netip"
	"time"
	"unicode/utf8"

	"github.com/netmortem/netmortem/model"
)

// jsonAttempt writes attempts as json.MarshalIndent(a, "    ", "  ")
// writes them, byte for byte, field by field: the fields of model.Attempt
// in its order, with its tags' names and omitempty, strings escaped as
// encoding/json escapes them (HTML characters included), addresses and
// times as their AppendText gives them. encoding/json's reflection and
// its second, indenting pass took nine tenths of the JSON form's time,
// and made garbage of every attempt. A time that RFC 3339 cannot write
// (a zone hour past 23, a year past 9999, which the JSON form clamps
// away) makes the attempt go through json.MarshalIndent, for its error.
// TestJSONAttemptAsMarshalIndent holds it to encoding/json's output.
type jsonAttempt struct {
	b     []byte
	depth int
	first bool // no field yet in the innermost object or array
	text  []byte
	times nanoCache
	err   bool // a value that only json.MarshalIndent writes as it does
}

// appendJSONAttempt appends a, as json.MarshalIndent(a, "    ", "  ")
// does, to b.
func (j *jsonAttempt) appendJSONAttempt(b []byte, a *model.Attempt) ([]byte, error) {
	j.b, j.depth, j.err = b, 0, false
	j.open('{')
	j.optStr("node", a.Node)
	j.key("pos")
	j.pos(&a.Pos)
	j.key("client")
	j.addrPort(a.Client)
	j.key("server")
	j.addrPort(a.Server)
	if a.Outer != nil {
		j.key("outer")
		j.open('{')
		j.key("src")
		j.addrPort(a.Outer.Src)
		j.key("dst")
		j.addrPort(a.Outer.Dst)
		j.close('}')
	}
	j.key("outcome")
	j.str(string(a.Outcome))
	j.optStr("conn_state", a.ConnState)
	j.optStr("history", a.History)
	j.optTime("start", a.Start)
	j.optTime("end", a.End)
	j.key("syn")
	j.segs(a.SYN)
	j.key("synack")
	j.segs(a.SYNACK)
	j.key("client_rst")
	j.segs(a.ClientRST)
	j.key("server_rst")
	j.segs(a.ServerRST)
	for _, f := range [...]struct {
		name string
		s    *model.Seg
	}{{"first_ack", a.FirstAck}, {"client_fin", a.ClientFIN}, {"server_fin", a.ServerFIN}} {
		if f.s != nil {
			j.key(f.name)
			j.seg(f.s)
		}
	}
	if a.ICMP {
		j.key("icmp")
		j.b = append(j.b, "true"...)
	}
	j.optStr("reused", a.Reused)
	j.int("packets", int64(a.Packets))
	j.int("client_bytes", a.ClientBytes)
	j.int("server_bytes", a.ServerBytes)
	j.int("isn", int64(a.ISN))
	j.optInt("mss", int64(a.MSS))
	j.optInt("server_mss", int64(a.ServerMSS))
	if a.ClientData != nil {
		j.key("client_data")
		j.dataSizes(a.ClientData)
	}
	if a.ServerData != nil {
		j.key("server_data")
		j.dataSizes(a.ServerData)
	}
	j.close('}')
	if j.err {
		m, err := json.MarshalIndent(a, "    ", "  ")
		return append(b, m...), err
	}
	return j.b, nil
}

// open starts an object or an array.
func (j *jsonAttempt) open(c byte) {
	j.b = append(j.b, c)
	j.depth++
	j.first = true
}

// close ends the innermost object or array, "{}" or "[]" when empty.
func (j *jsonAttempt) close(c byte) {
	j.depth--
	if !j.first {
		j.newline()
	}
	j.b = append(j.b, c)
	j.first = false
}

// newline starts a line at the current depth.
func (j *jsonAttempt) newline() {
	if n := 5 + 2*j.depth; n <= len(jsonIndent) {
		j.b = append(j.b, jsonIndent[:n]...)
		return
	}
	j.b = append(j.b, "\n    "...)
	for range j.depth {
		j.b = append(j.b, "  "...)
	}
}

// jsonIndent starts a line at each of the depths an attempt's values
// reach, as its first 5 + 2*depth bytes.
const jsonIndent = "\n    " + "        "

// key starts the field k of the innermost object.
func (j *jsonAttempt) key(k string) {
	j.elem()
	j.b = append(append(append(j.b, '"'), k...), `": `...)
}

// elem starts the next element of the innermost object or array.
func (j *jsonAttempt) elem() {
	if !j.first {
		j.b = append(j.b, ',')
	}
	j.first = false
	j.newline()
}

func (j *jsonAttempt) pos(p *model.Pos) {
	j.open('{')
	j.optStr("file", p.File)
	j.optInt("line", int64(p.Line))
	j.optInt("col", int64(p.Col))
	j.optInt("frame", int64(p.Frame))
	j.optStr("object", p.Object)
	j.optStr("path", p.Path)
	j.close('}')
}

func (j *jsonAttempt) segs(l []model.Seg) {
	if l == nil {
		j.b = append(j.b, "null"...)
		return
	}
	j.open('[')
	for i := range l {
		j.elem()
		j.seg(&l[i])
	}
	j.close(']')
}

func (j *jsonAttempt) seg(s *model.Seg) {
	j.open('{')
	j.optInt("frame", int64(s.Frame))
	j.optTime("time", s.Time)
	j.optInt("line", int64(s.Line))
	j.optStr("file", s.File)
	j.close('}')
}

func (j *jsonAttempt) dataSizes(d *model.DataSizes) {
	j.open('{')
	j.int("max_sent", int64(d.MaxSent))
	j.int("max_acked", int64(d.MaxAcked))
	j.optInt("large_retx", int64(d.LargeRetx))
	j.optInt("large_retx_size", int64(d.LargeRetxSize))
	if len(d.Retx) > 0 {
		j.key("retx")
		j.segs(d.Retx)
	}
	j.close('}')
}

// optTime writes the field k of time t unless t is zero (omitzero).
func (j *jsonAttempt) optTime(k string, t time.Time) {
	if t.IsZero() {
		return
	}
	j.key(k)
	j.time(t)
}

// time appends t as time.Time's MarshalJSON does.
func (j *jsonAttempt) time(t time.Time) {
	b, err := j.times.append(append(j.b, '"'), t)
	if err != nil {
		j.err = true
	}
	j.b = append(b, '"')
}

// addrPort appends ap as encoding/json writes a TextMarshaler.
func (j *jsonAttempt) addrPort(ap netip.AddrPort) {
	if ap.Addr().Is4() { // nothing to escape
		j.b = append(appendAddrPort(append(j.b, '"'), ap), '"')
		return
	}
	j.text, _ = ap.AppendText(j.text[:0])
	j.b = appendJSONString(j.b, j.text)
}

func (j *jsonAttempt) str(s string) { j.b = appendJSONString(j.b, s) }

// int writes the field k of value v.
func (j *jsonAttempt) int(k string, v int64) {
	j.key(k)
	j.b = appendInt(j.b, v)
}

// optInt writes the field k of value v, omitted when 0.
func (j *jsonAttempt) optInt(k string, v int64) {
	if v != 0 {
		j.int(k, v)
	}
}

// optStr writes the field k of value s, a string omitted when empty.
func (j *jsonAttempt) optStr(k, s string) {
	if s != "" {
		j.key(k)
		j.str(s)
	}
}

// appendJSONString appends s quoted as encoding/json quotes strings, HTML
// characters escaped.
func appendJSONString[S []byte | string](b []byte, s S) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
