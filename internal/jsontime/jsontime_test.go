package jsontime

import (
	"encoding/json"
	"testing"
	"time"
)

func TestClamp(t *testing.T) {
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2022, 9, 15, 19, 9, 2, 5, time.UTC), "2022-09-15T19:09:02.000000005Z"},
		{time.Time{}, "0001-01-01T00:00:00Z"},
		{time.Date(12345, 3, 4, 5, 6, 7, 8, time.UTC), "9999-03-04T05:06:07.000000008Z"},
		{time.Unix(1<<44, 0).UTC(), "9999-03-08T09:40:16Z"},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), "9999-12-31T23:00:00Z"},
		{time.Date(12000, 2, 29, 1, 0, 0, 0, time.UTC), "9999-02-28T01:00:00Z"},
		{time.Date(-44, 3, 15, 12, 0, 0, 0, time.UTC), "0000-03-15T12:00:00Z"},
		{time.Date(2022, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 30*3600)), "2021-12-30T18:00:00Z"},
	} {
		got := Clamp(c.in)
		b, err := json.Marshal(got)
		if err != nil {
			t.Errorf("Clamp(%v) = %v: %v", c.in, got, err)
			continue
		}
		if string(b) != `"`+c.want+`"` {
			t.Errorf("Clamp(%v) = %s, want %s", c.in, b, c.want)
		}
		if _, err := json.Marshal(c.in); (err == nil) != InRange(c.in) {
			t.Errorf("InRange(%v) = %v, but json.Marshal says %v", c.in, InRange(c.in), err)
		}
	}
}
