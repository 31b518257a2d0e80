package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestShardAuto(t *testing.T) {
	for _, tc := range []struct {
		index, count string
		k, n         int
		err          string // a part of the error; "" when none
	}{
		{"0", "4", 0, 4, ""},
		{"3", "4", 3, 4, ""},
		{"0", "1", 0, 1, ""},
		{"", "4", 0, 0, "JOB_COMPLETION_INDEX is not set"},
		{"", "", 0, 0, "JOB_COMPLETION_INDEX is not set"},
		{"2", "", 0, 0, "JOB_COMPLETIONS is not set"},
		{"2", "four", 0, 0, `JOB_COMPLETIONS="four"`},
		{"0", "0", 0, 0, `JOB_COMPLETIONS="0"`},
		{"0", "-2", 0, 0, `JOB_COMPLETIONS="-2"`},
		{"x", "4", 0, 0, `JOB_COMPLETION_INDEX="x"`},
		{"-1", "4", 0, 0, `JOB_COMPLETION_INDEX="-1"`},
		{"4", "4", 0, 0, "JOB_COMPLETION_INDEX=4 is not below JOB_COMPLETIONS=4"},
	} {
		env := map[string]string{"JOB_COMPLETION_INDEX": tc.index, "JOB_COMPLETIONS": tc.count}
		k, n, err := shardAuto(func(name string) string { return env[name] })
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("index %q count %q: %v", tc.index, tc.count, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("index %q count %q: error %v, want one saying %q", tc.index, tc.count, err, tc.err)
		case k != tc.k || n != tc.n:
			t.Errorf("index %q count %q: shard %d/%d, want %d/%d", tc.index, tc.count, k, n, tc.k, tc.n)
		}
	}
}

// TestBatchShardAuto checks that --shard auto splits bundles as --shard
// K/N does with the same K and N, and that a batch whose environment lacks
// the variables is refused with exit 2 and says which is missing.
func TestBatchShardAuto(t *testing.T) {
	bundles, _ := filepath.Glob(fixture("captures/*.pcap*"))
	if len(bundles) < 3 {
		t.Fatalf("%d captures, want several to shard", len(bundles))
	}
	seen := map[string]int{}
	for k := range 3 {
		t.Setenv("JOB_COMPLETION_INDEX", fmt.Sprint(k))
		t.Setenv("JOB_COMPLETIONS", "3")
		auto := filepath.Join(t.TempDir(), "auto.jsonl")
		runCLI(t, append([]string{"batch", "-q", "--shard", "auto", "--out", auto}, bundles...)...)
		explicit := filepath.Join(t.TempDir(), "explicit.jsonl")
		runCLI(t, append([]string{"batch", "-q", "--shard", fmt.Sprintf("%d/3", k), "--out", explicit}, bundles...)...)
		got, want := bundleNames(readJSONL(t, auto)), bundleNames(readJSONL(t, explicit))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("--shard auto with index %d of 3 analyzed %q, --shard %d/3 %q", k, got, k, want)
		}
		for _, b := range got {
			seen[b]++
		}
	}
	for _, b := range bundles {
		if seen[b] != 1 {
			t.Errorf("%s analyzed %d times over 3 automatic shards, want once", b, seen[b])
		}
	}

	t.Setenv("JOB_COMPLETIONS", "")
	code, _, stderr := runCLI(t, "batch", "-q", "--shard", "auto", incident)
	if code != exitUsage || !strings.Contains(stderr, "--shard: auto: JOB_COMPLETIONS is not set") {
		t.Errorf("without JOB_COMPLETIONS: exit %d, stderr %q; want %d and the variable named", code, stderr, exitUsage)
	}
}

// bundleNames are the bundles of lines, sorted.
func bundleNames(lines []batchResult) []string {
	var names []string
	for _, l := range lines {
		names = append(names, l.Bundle)
	}
	slices.Sort(names)
	return names
}
