package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// buildNetmortem builds cmd/netmortem with the build tags tags ("" for
// the laptop build, "fleet" for the fleet build) into dir.
func buildNetmortem(t *testing.T, dir, tags string) string {
	t.Helper()
	bin := filepath.Join(dir, "netmortem-"+tags)
	args := []string{"build", "-buildvcs=false", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %q: %v\n%s", tags, err, out)
	}
	return bin
}

// run runs bin with args in the repository's root and returns what it
// wrote and its exit code.
func runBin(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = testutil.Root()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return o.String(), e.String(), code
}

// firstDst is the first destination IP:PORT of the flows of a fixture
// (flows -o json), for trace.
var firstDst = regexp.MustCompile(`"dst": "([0-9.]+:[0-9]+)"`)

// TestLaptopBuildSameOutput checks that the laptop build (no build tags:
// no object-storage or database client) writes what the fleet build
// (-tags fleet) writes, byte for byte, with the same exit code: analyze
// -o json on every incident fixture, and analyze, flows, trace, diff and
// inspect on every fourth (otherCommandsEvery); and that it names the
// fleet build for a bucket URL and a database.
func TestLaptopBuildSameOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	laptop, fleet := buildNetmortem(t, dir, ""), buildNetmortem(t, dir, "fleet")
	checkBuildSizes(t, map[string]string{"laptop": laptop, "fleet": fleet})
	incidents, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "incidents", "*"))
	if err != nil || len(incidents) < 10 {
		t.Fatalf("fixtures/incidents: %d fixtures, %v", len(incidents), err)
	}
	for i, abs := range sampled(t, incidents) {
		inc, _ := filepath.Rel(testutil.Root(), abs)
		commands := [][]string{{"analyze", "-o", "json", inc}}
		if i%otherCommandsEvery == 0 {
			other, _ := filepath.Rel(testutil.Root(), incidents[(i+1)%len(incidents)])
			dst := "10.96.0.10:53"
			if out, _, _ := runBin(t, fleet, "flows", "-o", "json", inc); firstDst.MatchString(out) {
				dst = firstDst.FindStringSubmatch(out)[1]
			}
			commands = append(commands, []string{"analyze", inc}, []string{"flows", inc},
				[]string{"trace", "--dst", dst, inc}, []string{"diff", other, inc}, []string{"inspect", inc})
		}
		for _, args := range commands {
			lo, le, lc := runBin(t, laptop, args...)
			fo, fe, fc := runBin(t, fleet, args...)
			if lo != fo || le != fe || lc != fc {
				t.Errorf("netmortem %s: the laptop build (exit %d) and the fleet build (exit %d) differ:\nlaptop:\n%s%s\nfleet:\n%s%s",
					strings.Join(args, " "), lc, fc, lo, le, fo, fe)
			}
			if lo+le == "" {
				t.Errorf("netmortem %s wrote nothing (exit %d)", strings.Join(args, " "), lc)
			}
		}
	}
	for _, args := range [][]string{
		{"analyze", "s3://tickets/a.tar.gz"},
		{"batch", "--out", filepath.Join(dir, "r.jsonl"), "gs://tickets/**/*.tar.gz"},
		{"batch", "--db", filepath.Join(dir, "r.db"), "fixtures/incidents/stale-dnat"},
	} {
		_, stderr, code := runBin(t, laptop, args...)
		if code == 0 || !strings.Contains(stderr, "laptop build") || !strings.Contains(stderr, "-tags fleet") {
			t.Errorf("laptop build, netmortem %s: exit %d, %q: want it to say that the fleet build (-tags fleet) reads it",
				strings.Join(args, " "), code, stderr)
		}
	}
}

// otherCommandsEvery is how often, among the incident fixtures,
// TestLaptopBuildSameOutput runs the commands other than analyze -o json
// in both builds. The builds differ only in what source/, results/query
// and internal/batch compile for a URL or a database (LAPTOP_PKGS in the
// Makefile): a local input takes the same code in both, whatever the
// incident, and each command's own code is the same for every fixture.
// Run on every fixture, the six commands took 816 runs of the two
// binaries, the longest test of the package.
const otherCommandsEvery = 4

// fleetModules are the modules of the fleet build's clients, which the
// laptop build must not link.
var fleetModules = []string{"gocloud.dev", "google.golang.org/grpc", "cloud.google.com/", "github.com/aws/",
	"github.com/Azure/", "go.opentelemetry.io/", "github.com/jackc/pgx", "modernc.org/sqlite"}

// laptopMaxMB bounds the laptop build. It grows with the rules and the
// formats, about 30 KB each (40.1 MB at 59 rules); any of the fleet's
// clients would add tens of MB at once, which the module check below
// names too.
const laptopMaxMB = 44

// sizeRow is a row of the table of docs/dependencies.md, "Binary sizes".
var sizeRow = regexp.MustCompile("(?m)^\\| (laptop|fleet) \\| `[^`]*` \\| ([0-9.]+) MB \\|$")

// checkBuildSizes checks the binaries of bins (by build) against the sizes
// docs/dependencies.md gives, within 10%, on linux/amd64 where they were
// measured; the laptop build under 40 MB; and the packages it links.
func checkBuildSizes(t *testing.T, bins map[string]string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "dependencies.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := sizeRow.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != len(bins) {
		t.Fatalf("docs/dependencies.md: %d rows of sizes (%q), want one per build", len(rows), rows)
	}
	for _, r := range rows {
		st, err := os.Stat(bins[r[1]])
		if err != nil {
			t.Fatal(err)
		}
		mb := float64(st.Size()) / 1e6
		doc, _ := strconv.ParseFloat(r[2], 64)
		if r[1] == "laptop" && mb >= laptopMaxMB {
			t.Errorf("the laptop build is %.1f MB, want under %d MB", mb, laptopMaxMB)
		}
		if runtime.GOOS+"/"+runtime.GOARCH == "linux/amd64" && (mb > doc*1.1 || mb < doc/1.1) {
			t.Errorf("the %s build is %.1f MB, docs/dependencies.md says %.1f MB: measure it again (CGO_ENABLED=0 go build) and update its table",
				r[1], mb, doc)
		}
	}
	out, err := exec.Command("go", "version", "-m", bins["laptop"]).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fleetModules {
		if strings.Contains(string(out), "\tdep\t"+m) {
			t.Errorf("the laptop build links %s (go version -m): it belongs to the fleet build", m)
		}
	}
}
