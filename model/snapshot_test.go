package model

import (
	"reflect"
	"testing"
)

// filled returns a Snapshot whose every list (its own and its Kube's)
// holds n elements. A field of another kind fails the test: Merge and this
// test must both learn it.
func filled(t *testing.T, n int) *Snapshot {
	t.Helper()
	s := &Snapshot{}
	var fill func(v reflect.Value, path string)
	fill = func(v reflect.Value, path string) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), n, n))
			case reflect.Struct:
				fill(f, name+".")
			default:
				t.Fatalf("Snapshot.%s is a %s: make Merge handle it, then this test", name, f.Kind())
			}
		}
	}
	fill(reflect.ValueOf(s).Elem(), "")
	return s
}

// Every field of a Snapshot is merged: a field added to Snapshot (or Kube)
// and left out of Merge fails here.
func TestMergeEveryField(t *testing.T) {
	s := filled(t, 1)
	s.Merge(filled(t, 1))
	want := filled(t, 2)
	var cmp func(got, want reflect.Value, path string)
	cmp = func(got, want reflect.Value, path string) {
		for i := 0; i < got.NumField(); i++ {
			name := path + got.Type().Field(i).Name
			g, w := got.Field(i), want.Field(i)
			if g.Kind() == reflect.Struct {
				cmp(g, w, name+".")
				continue
			}
			if !reflect.DeepEqual(g.Interface(), w.Interface()) {
				t.Errorf("Snapshot.%s: %d elements after merging two of one, want %d", name, g.Len(), w.Len())
			}
		}
	}
	cmp(reflect.ValueOf(s).Elem(), reflect.ValueOf(want).Elem(), "")
}

func TestMergeNil(t *testing.T) {
	s := filled(t, 1)
	s.Merge(nil)
	if !reflect.DeepEqual(s, filled(t, 1)) {
		t.Error("merging nil changed the snapshot")
	}
}
