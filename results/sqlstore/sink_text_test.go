package sqlstore

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/results"
)

// TestOddText checks a line whose text is not valid UTF-8 or holds U+0000:
// it is written (invalid bytes replaced as in the JSON line; U+0000 too in
// PostgreSQL, which cannot hold it), written again without duplicates, and
// Done names its bundle as the JSON line does.
func TestOddText(t *testing.T) {
	eachDialect(t, func(t *testing.T, target string) {
		db := open(t, target)
		ctx := context.Background()
		l := testLine("bad\xffname\x00.tar", 2)
		l.Findings[0].Facts["nul"] = "a\x00b \\u0000"
		l.Findings[0].Title = "t\x00\xfe"
		l.Findings[1].Subject["k"] = "\x00"
		l.Error = "e\x00"
		l.InputList[0].Path = "p\x00\xff"
		for range 2 {
			if err := db.Write(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		want := "bad\ufffdname\x00.tar"
		if db.Dialect() == PostgreSQL {
			want = "bad\ufffdname\ufffd.tar"
		}
		done, err := db.Done(ctx)
		if err != nil || len(done) != 1 || !done[want] {
			t.Errorf("done %q, %v; want %q", slices.Collect(maps.Keys(done)), err, want)
		}
		var back results.Line
		if err := json.Unmarshal([]byte(query(t, db, "SELECT line FROM bundles")[0]), &back); err != nil {
			t.Fatal(err)
		}
		if back.Findings[0].Facts["nul"] != map[bool]string{true: "a\ufffdb \\u0000", false: "a\x00b \\u0000"}[db.Dialect() == PostgreSQL] {
			t.Errorf("fact %q", back.Findings[0].Facts["nul"])
		}
		l.Findings = l.Findings[:1]
		if err := db.Write(ctx, l); err != nil {
			t.Fatal(err)
		}
		if got := query(t, db, "SELECT count(*) FROM findings"); !slices.Equal(got, []string{"1"}) {
			t.Errorf("%s findings after a rewrite with one, want 1", got)
		}
	})
}
