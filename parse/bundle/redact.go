package bundle

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// HiddenValue is what troubleshoot's redactors write in place of a value
// they removed.
const HiddenValue = "***HIDDEN***"

// tokenRE matches a tokenized value: ***TOKEN_<TYPE>_<HASH>***, TYPE in
// upper case (it may hold underscores), HASH alphanumeric.
var tokenRE = lazyre.New(`^\*\*\*TOKEN_([A-Z0-9]+(?:_[A-Z0-9]+)*)_([A-Za-z0-9]+)\*\*\*$`)

// Redacted reports whether s is a value a redactor removed
// (troubleshoot's "***HIDDEN***", surrounding quotes and spaces allowed).
// Such a value is unknown, never data: parsers skip the field instead of
// reporting a syntax error, and never treat it as an address, a port or a
// setting.
func Redacted(s string) bool {
	return strings.Trim(strings.TrimSpace(s), `"'`) == HiddenValue
}

// Token reports whether s is a tokenized value, ***TOKEN_<TYPE>_<HASH>***,
// and returns its type and hash. A tokenized value stands for a value the
// redactor replaced with the same token everywhere in the bundle: it is an
// opaque identity. Keep it as it is, so joins across files still match
// (the same Service IP tokenized in iptables-save and in services.json
// compares equal), but never parse it as an address or number.
func Token(s string) (typ, hash string, ok bool) {
	m := tokenRE.FindStringSubmatch(strings.Trim(strings.TrimSpace(s), `"'`))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// redactions counts hidden values met in one input.
type redactions struct {
	count map[string]int
	first map[string]model.Pos
}

func (r *redactions) add(pos model.Pos) {
	if r.count == nil {
		r.count = map[string]int{}
		r.first = map[string]model.Pos{}
	}
	if _, ok := r.first[pos.File]; !ok || pos.Less(r.first[pos.File]) {
		r.first[pos.File] = pos
	}
	r.count[pos.File]++
}

// scrubRedacted is the pass Open runs after parsing: every value a
// redactor hid is dropped from the model, so no rule reads
// "***HIDDEN***" as data. Dropped sysctls, component flags and log fields
// are gone (unknown); hidden strings inside Kubernetes objects become
// empty. Each input that held hidden values gets one warning with the count
// and the first position, except those of netmortem's collector.
func scrubRedacted(s *model.Snapshot, warns *model.ErrorList) {
	var r redactions

	sysctls := s.Sysctls[:0]
	for _, sc := range s.Sysctls {
		if Redacted(sc.Value) {
			r.add(sc.Pos)
			continue
		}
		sysctls = append(sysctls, sc)
	}
	s.Sysctls = sysctls

	for i := range s.Components {
		c := &s.Components[i]
		args := c.Args[:0]
		for _, a := range c.Args {
			if Redacted(a.Value) {
				pos := a.Pos
				if pos.IsZero() {
					pos = c.Pos
				}
				r.add(pos)
				continue
			}
			args = append(args, a)
		}
		c.Args = args
	}

	for i := range s.Logs {
		l := &s.Logs[i]
		for k, v := range l.Fields {
			if Redacted(v) {
				r.add(l.Pos)
				delete(l.Fields, k)
			}
		}
	}

	for i := range s.Sockets {
		if Redacted(s.Sockets[i].Process) {
			r.add(s.Sockets[i].Pos)
			s.Sockets[i].Process = ""
		}
	}

	scrubKube(&s.Kube, &r)

	// netmortem's collector hides only what looks like a credential,
	// which no rule reads: its hidden values go without a warning.
	collected := map[string]bool{}
	for _, in := range s.Inputs {
		if in.Layout == LayoutNetmortem {
			collected[in.Path] = true
		}
	}
	files := make([]string, 0, len(r.count))
	for f := range r.count {
		if !collected[f] {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		warns.Add(r.first[f], "", fmt.Errorf("%d value(s) hidden by redaction (%s) read as unknown", r.count[f], HiddenValue))
	}
}

// scrubKube clears hidden strings in every Kubernetes object, whatever
// field holds them.
func scrubKube(k *model.Kube, r *redactions) {
	v := reflect.ValueOf(k).Elem()
	for i := 0; i < v.NumField(); i++ {
		list := v.Field(i)
		if list.Kind() != reflect.Slice {
			continue
		}
		for j := 0; j < list.Len(); j++ {
			obj := list.Index(j)
			pos := model.Pos{}
			if src := obj.FieldByName("Source"); src.IsValid() {
				if p, ok := src.FieldByName("Pos").Interface().(model.Pos); ok {
					pos = p
				}
			}
			n := scrubValue(obj, 0)
			for ; n > 0; n-- {
				r.add(pos)
			}
		}
	}
}

// scrubValue clears hidden strings reachable from v and returns how many
// it cleared. Map values that are hidden are deleted; slice elements are
// emptied.
func scrubValue(v reflect.Value, depth int) int {
	if depth > 32 {
		return 0
	}
	n := 0
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && Redacted(v.String()) {
			v.SetString("")
			n++
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n += scrubValue(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += scrubValue(v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			n += scrubValue(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				if Redacted(v.MapIndex(k).String()) {
					v.SetMapIndex(k, reflect.Value{})
					n++
				}
			}
		}
	}
	return n
}
