package anon

import (
	"net/netip"
	"reflect"
	"time"
)

var (
	addrType     = reflect.TypeFor[netip.Addr]()
	prefixType   = reflect.TypeFor[netip.Prefix]()
	addrPortType = reflect.TypeFor[netip.AddrPort]()
	timeType     = reflect.TypeFor[time.Time]()
)

// Value returns a deep copy of v with every string it holds passed through
// Text, and every netip.Addr, netip.Prefix and netip.AddrPort replaced by
// its token. The keys of the maps v holds directly (fields of type map)
// that are words (lower-case letters and underscores: a finding's facts
// and subject) are kept, as they name what the values are; other keys,
// and the keys of maps inside maps or interfaces, are anonymized like
// values. Unexported fields are copied as they are.
func Value[T any](a *Anonymizer, v T) T {
	rv := reflect.ValueOf(&v).Elem()
	out := a.value(rv, false)
	return out.Interface().(T)
}

// value returns the anonymized copy of v; nested says whether v is inside
// a map or interface value (whose map keys are anonymized).
func (a *Anonymizer) value(v reflect.Value, nested bool) reflect.Value {
	t := v.Type()
	switch t {
	case addrType:
		return reflect.ValueOf(a.Addr(v.Interface().(netip.Addr)))
	case prefixType:
		return reflect.ValueOf(a.Prefix(v.Interface().(netip.Prefix)))
	case addrPortType:
		ap := v.Interface().(netip.AddrPort)
		return reflect.ValueOf(netip.AddrPortFrom(a.Addr(ap.Addr()), ap.Port()))
	case timeType:
		return v
	}
	switch t.Kind() {
	case reflect.String:
		return reflect.ValueOf(a.Text(v.String())).Convert(t)
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(a.value(v.Elem(), nested))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t).Elem()
		out.Set(a.value(v.Elem(), true))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(a.value(v.Index(i), nested))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(a.value(v.Index(i), nested))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			if nested || k.Kind() != reflect.String || !isWord(k.String()) {
				k = a.value(k, true)
			}
			out.SetMapIndex(k, a.value(iter.Value(), true))
		}
		return out
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				out.Field(i).Set(a.value(v.Field(i), nested))
			}
		}
		return out
	}
	return v
}

// isWord reports whether s is lower-case letters and underscores.
func isWord(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return s != ""
}
