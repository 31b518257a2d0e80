package kubernetes

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction: its keyword, upper case, and
// its arguments with continuation lines joined.
type instruction struct {
	cmd, args string
	line      int
}

// parseDockerfile reads the instructions of a Dockerfile: the ARGs before
// the first FROM, and the stages, each starting with its FROM.
func parseDockerfile(t *testing.T, name string) (global []instruction, stages [][]instruction) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var cur strings.Builder
	start, n := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " "), line: start}
		cur.Reset()
		switch {
		case in.cmd == "FROM":
			stages = append(stages, []instruction{in})
		case len(stages) == 0:
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before the first FROM", name, in.line, in.cmd)
			}
			global = append(global, in)
		default:
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Len() > 0 {
		t.Fatalf("%s: ends in a continuation line", name)
	}
	if len(stages) == 0 {
		t.Fatalf("%s: no FROM", name)
	}
	return global, stages
}

// finalUser is the USER of the Dockerfile's last stage.
func finalUser(t *testing.T, name string) string {
	t.Helper()
	_, stages := parseDockerfile(t, name)
	user := ""
	for _, in := range stages[len(stages)-1] {
		if in.cmd == "USER" {
			user = in.args
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	return uid
}

// The runtime image both Dockerfiles end in, and where the binary is.
const (
	runtimeBase = "gcr.io/distroless/static-debian12:nonroot"
	entrypoint  = `["/usr/bin/netmortem"]`
)

// TestDockerfilesFinalStage checks the image the Job and the release run:
// distroless static, nothing run inside it (it has no shell), a numeric
// non-root USER (the kubelet can check runAsNonRoot only for a number),
// and the binary as the exec-form entrypoint; the same in the Job's
// Dockerfile and the root one goreleaser builds.
func TestDockerfilesFinalStage(t *testing.T) {
	for _, name := range []string{"Dockerfile", "../../Dockerfile"} {
		_, stages := parseDockerfile(t, name)
		final := stages[len(stages)-1]
		if final[0].args != runtimeBase {
			t.Errorf("%s:%d: the last stage is FROM %s, want %s", name, final[0].line, final[0].args, runtimeBase)
		}
		var user, entry string
		for _, in := range final[1:] {
			switch in.cmd {
			case "RUN", "SHELL", "CMD", "ADD":
				t.Errorf("%s:%d: %s in the last stage (distroless has no shell; files are copied with COPY)", name, in.line, in.cmd)
			case "USER":
				user = in.args
			case "ENTRYPOINT":
				entry = in.args
			case "COPY":
				if !strings.HasSuffix(in.args, " /usr/bin/netmortem") {
					t.Errorf("%s:%d: COPY %s, want the binary copied to /usr/bin/netmortem", name, in.line, in.args)
				}
			}
		}
		uid, gid, _ := strings.Cut(user, ":")
		if u, err := strconv.Atoi(uid); err != nil || u == 0 {
			t.Errorf("%s: USER %q, want a numeric user other than root", name, user)
		}
		if g, err := strconv.Atoi(gid); err != nil || g == 0 {
			t.Errorf("%s: USER %q, want a numeric group other than root", name, user)
		}
		if entry != entrypoint {
			t.Errorf("%s: ENTRYPOINT %s, want %s", name, entry, entrypoint)
		}
	}
	if a, b := finalUser(t, "Dockerfile"), finalUser(t, "../../Dockerfile"); a != b {
		t.Errorf("the Job's image runs as %s, the release image as %s", a, b)
	}
}

// TestDockerfileBuildStage checks how the Job's Dockerfile builds the
// binary: static (no cgo), with the version variables the release build
// sets, and with the Go version go.mod asks for.
func TestDockerfileBuildStage(t *testing.T) {
	global, stages := parseDockerfile(t, "Dockerfile")
	if len(stages) != 2 {
		t.Fatalf("%d stages, want 2 (build, then run)", len(stages))
	}
	from := stages[0][0].args
	if !strings.HasPrefix(from, "golang:${GO_VERSION}") || !strings.HasSuffix(from, " AS build") {
		t.Errorf("FROM %s, want golang:${GO_VERSION}... AS build", from)
	}
	goVersion := ""
	for _, in := range global {
		if v, ok := strings.CutPrefix(in.args, "GO_VERSION="); ok {
			goVersion = v
		}
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("go.mod has no go line")
	}
	if goVersion != string(m[1]) {
		t.Errorf("ARG GO_VERSION=%s, go.mod's go %s", goVersion, m[1])
	}

	var build string
	for _, in := range stages[0] {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0 ", "-tags fleet", "-trimpath", "./cmd/netmortem"} {
		if !strings.Contains(build, want) {
			t.Errorf("RUN %s: no %s", build, want)
		}
	}
	// The same link-time variables as .goreleaser.yaml's, each from an ARG.
	gr, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	x := regexp.MustCompile(`-X (github\.com/netmortem/netmortem/internal/buildinfo\.\w+)=`)
	var vars []string
	for _, m := range x.FindAllStringSubmatch(string(gr), -1) {
		vars = append(vars, m[1])
	}
	if len(vars) != 3 {
		t.Fatalf(".goreleaser.yaml sets %q, want version, commit and date", vars)
	}
	for _, v := range vars {
		arg := strings.ToUpper(v[strings.LastIndex(v, ".")+1:])
		if !strings.Contains(build, "-X "+v+"=${"+arg+"}") {
			t.Errorf("the build does not set %s from ARG %s", v, arg)
		}
		declared := false
		for _, in := range stages[0] {
			declared = declared || (in.cmd == "ARG" && strings.HasPrefix(in.args, arg))
		}
		if !declared {
			t.Errorf("no ARG %s in the build stage", arg)
		}
	}
}
