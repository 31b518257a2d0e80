package logs

import (
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// CRILogFormat reads the log files of containerd and CRI-O.
var CRILogFormat = logFormat("cri", format.Format{
	Name: "cri-log",
	Command: "cat /var/log/containers/<pod>_<ns>_<container>-<id>.log, /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log " +
		"(containerd, CRI-O)",
	Doc: "the container runtime's records (`<RFC 3339 time> stdout|stderr F|P <line>`), partial `P` records joined " +
		"to the `F` record that ends them; the line inside is read as what it is (klog, JSON, logfmt, nginx ...), " +
		"its own time kept when it has one, else the runtime's; namespace, pod and container come from the file's " +
		"path (or the path a pasted `cat` names), the container being the event's source, as for `kubectl logs -c`",
})

// DockerJSONLogFormat reads Docker's json-file logs.
var DockerJSONLogFormat = logFormat("docker-json", format.Format{
	Name: "docker-json-log",
	Command: "cat /var/lib/docker/containers/<id>/<id>-json.log, /var/log/containers/*.log and /var/log/pods/... on " +
		"Docker (dockershim) nodes",
	Doc: "`{\"log\":\"...\\n\",\"stream\":\"stderr\",\"time\":\"...\"}` records; a `log` without its final newline " +
		"continues in the next record; the line inside is read as what it is, as for cri-log, with namespace, pod " +
		"and container from the path; a record a terminal hard-wrapped over two lines is joined",
})

// wrapped is what a container runtime's record, or kubectl logs
// --timestamps, puts around a container's line.
type wrapped struct {
	kind    string // "cri", "docker-json" or "timestamps"
	stream  string // stdout, stderr; "" for kubectl's timestamps
	time    time.Time
	partial bool   // the line continues in the next record of the stream
	inner   string // the container's line
	// node and container are set when the record's own prefix names
	// them (syslog's host; an rsyslog template's "<ns> <pod> <container>").
	node      string
	container *ContainerLog
}

var (
	// criRe matches the header of a CRI log record: time, stream and
	// tags (F full, P partial; more tags may follow after ':').
	criRe = lazyre.New(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) ([A-Z](?::[A-Z]+)*)(?: |$)`)
	// timestampsRe matches the time kubectl logs --timestamps writes
	// before each line.
	timestampsRe = lazyre.New(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) `)
)

// unwrap reads a container runtime's record (CRI or Docker's json-file)
// or a line of kubectl logs --timestamps whose line is of a known shape
// (klog, JSON, logfmt, etcd, nginx, CoreDNS), and returns what it wraps.
func (lr *logReader) unwrap(line string) (wrapped, bool) {
	if len(line) < 20 {
		return wrapped{}, false
	}
	if line[0] == '{' {
		return unwrapDocker(line)
	}
	if line[0] < '0' || line[0] > '9' || line[10] != 'T' {
		if w, ok := unwrapPrefixed(line); ok {
			return w, true
		}
		return lr.unwrapStern(line)
	}
	if m, rest := submatches(criRe, line); m != nil {
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			return wrapped{}, false
		}
		return wrapped{kind: "cri", stream: m[2], time: t.UTC(), partial: strings.Contains(m[3], "P"), inner: rest}, true
	}
	if m, rest := submatches(timestampsRe, line); m != nil {
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			return wrapped{}, false
		}
		switch _, kind, _ := lr.parseLine(rest); kind {
		case "klog", "json", "logfmt", "etcd", "nginx-access", "nginx-error", "coredns":
			return wrapped{kind: "timestamps", time: t.UTC(), inner: rest}, true
		}
	}
	return wrapped{}, false
}

// k8sNameRe matches a namespace, pod or container name.
var k8sNameRe = lazyre.New(`^[a-z0-9][a-z0-9.-]{0,252}$`)

// unwrapPrefixed reads a CRI record after "<namespace> <pod> <container> ",
// as an rsyslog template that takes them from the /var/log/pods path
// writes it.
func unwrapPrefixed(line string) (wrapped, bool) {
	// Three words, then a digit: checked before anything is cut.
	if c := line[0]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
		return wrapped{}, false
	}
	i, words := 0, 0
	for words < 3 {
		j := strings.IndexByte(line[i:], ' ')
		if j <= 0 {
			return wrapped{}, false
		}
		i += j + 1
		words++
	}
	if i >= len(line) || line[i] < '0' || line[i] > '9' {
		return wrapped{}, false
	}
	f := strings.SplitN(line, " ", 4)
	if !k8sNameRe.MatchString(f[0]) || !k8sNameRe.MatchString(f[1]) || !k8sNameRe.MatchString(f[2]) {
		return wrapped{}, false
	}
	m, rest := submatches(criRe, f[3])
	if m == nil {
		return wrapped{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		return wrapped{}, false
	}
	return wrapped{kind: "cri", stream: m[2], time: t.UTC(), partial: strings.Contains(m[3], "P"), inner: rest,
		container: &ContainerLog{Namespace: f[0], Pod: f[1], Container: f[2]}}, true
}

// dockerRecord is one line of Docker's json-file log driver.
type dockerRecord struct {
	Log    *string `json:"log"`
	Stream string  `json:"stream"`
	Time   string  `json:"time"`
}

func unwrapDocker(line string) (wrapped, bool) {
	if !strings.HasPrefix(line, `{"log":`) && !strings.Contains(line, `"log":`) {
		return wrapped{}, false
	}
	var rec dockerRecord
	if json.Unmarshal([]byte(line), &rec) != nil || rec.Log == nil || rec.Time == "" {
		return wrapped{}, false
	}
	if rec.Stream != "stdout" && rec.Stream != "stderr" {
		return wrapped{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, rec.Time)
	if err != nil {
		return wrapped{}, false
	}
	inner, full := strings.CutSuffix(*rec.Log, "\n")
	inner = strings.TrimSuffix(inner, "\r")
	return wrapped{kind: "docker-json", stream: rec.Stream, time: t.UTC(), partial: !full, inner: inner}, true
}

// ContainerLog is what the path of a container's log file on a node says
// of the container.
type ContainerLog struct {
	Namespace, Pod, Container string
}

var (
	// containersNameRe matches /var/log/containers/<pod>_<ns>_<container>-<64 hex id>.log.
	containersNameRe = lazyre.New(`^([a-z0-9][a-z0-9.-]*)_([a-z0-9][a-z0-9-]*)_([a-z0-9][a-z0-9-]*)-[0-9a-f]{64}\.log$`)
	// podsDirRe matches the directory <ns>_<pod>_<uid> of /var/log/pods
	// (the uid is a UUID, or a static pod's config hash).
	podsDirRe = lazyre.New(`^([a-z0-9][a-z0-9-]*)_([a-z0-9][a-z0-9.-]*)_([0-9a-f-]{16,})$`)
	// podsFileRe matches the <restart>.log file of /var/log/pods, rotated
	// (0.log.20240102-030405) or not.
	podsFileRe = lazyre.New(`^\d+\.log(?:\.\d{8}-\d{6}(?:\.gz)?)?$`)
	// oldPodsFileRe and uidRe match /var/log/pods/<uid>/<container>_<n>.log
	// of Kubernetes before 1.14.
	oldPodsFileRe = lazyre.New(`^([a-z0-9][a-z0-9-]*)_\d+\.log$`)
	uidRe         = lazyre.New(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ContainerLogPath reads the namespace, pod and container from the path
// of a container's log file: /var/log/containers/<pod>_<ns>_<container>-<id>.log
// (the name alone will do) or /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log
// (kind's and other collectors' copies of that tree too; before
// Kubernetes 1.14 /var/log/pods/<uid>/<container>_<n>.log, which names the
// container only). p may be an archive member
// ("bundle.tar.gz!node1/var/log/pods/..."). ok is false for any other path.
func ContainerLogPath(p string) (ContainerLog, bool) {
	if i := strings.LastIndexByte(p, '!'); i >= 0 {
		p = p[i+1:]
	}
	p = strings.ReplaceAll(p, "\\", "/")
	base := path.Base(p)
	if m := containersNameRe.FindStringSubmatch(base); m != nil {
		return ContainerLog{Pod: m[1], Namespace: m[2], Container: m[3]}, true
	}
	if m := oldPodsFileRe.FindStringSubmatch(base); m != nil && uidRe.MatchString(path.Base(path.Dir(p))) {
		// Kubernetes before 1.14: /var/log/pods/<uid>/<container>_<n>.log.
		return ContainerLog{Container: m[1]}, true
	}
	if !podsFileRe.MatchString(base) {
		return ContainerLog{}, false
	}
	dir := path.Dir(p)
	container := path.Base(dir)
	m := podsDirRe.FindStringSubmatch(path.Base(path.Dir(dir)))
	if m == nil || container == "." || container == "/" {
		return ContainerLog{}, false
	}
	return ContainerLog{Namespace: m[1], Pod: m[2], Container: container}, true
}

// containerFromCommand reads the container of a pasted command: kubectl
// logs [-n NS] POD [-c CONTAINER], or a command reading a container's log
// file (cat /var/log/containers/...).
func containerFromCommand(cmd string) (ContainerLog, bool) {
	if cmd == "" {
		return ContainerLog{}, false
	}
	if k, ok := text.ParseKubectl(cmd); ok {
		if k.Verb != "logs" || len(k.Args) == 0 {
			return ContainerLog{}, false
		}
		pod := k.Args[0]
		if t, name, found := strings.Cut(pod, "/"); found {
			if t != "pod" && t != "pods" && t != "po" {
				return ContainerLog{}, false // deploy/x, ds/x: a pod of them
			}
			pod = name
		}
		c := ContainerLog{Namespace: k.Namespace, Pod: pod, Container: kubectlContainer(cmd)}
		if len(k.Args) > 1 && c.Container == "" {
			c.Container = k.Args[1] // kubectl logs POD CONTAINER
		}
		return c, true
	}
	f := strings.Fields(strings.Split(cmd, "|")[0])
	for i := len(f) - 1; i > 0; i-- {
		if c, ok := ContainerLogPath(f[i]); ok {
			return c, true
		}
	}
	return ContainerLog{}, false
}

// kubectlContainer returns the -c (--container) value of a kubectl
// command line, "" when none.
func kubectlContainer(cmd string) string {
	f := strings.Fields(strings.Split(cmd, "|")[0])
	for i, w := range f {
		if (w == "-c" || w == "--container") && i+1 < len(f) {
			return f[i+1]
		}
		if v, ok := strings.CutPrefix(w, "--container="); ok {
			return v
		}
		if v, ok := strings.CutPrefix(w, "-c="); ok {
			return v
		}
	}
	return ""
}

// startsRecord reports whether line starts a container runtime's record.
func (lr *logReader) startsRecord(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, `{"log":"`) {
		return true
	}
	_, ok := lr.unwrap(strings.TrimSuffix(t, " \\"))
	return ok
}

// record reads one record of a container runtime (or one line of kubectl
// logs --timestamps) read at pos.
func (lr *logReader) record(w wrapped, pos model.Pos) {
	if w.partial {
		if p := lr.partial[w.stream]; p != nil {
			p.text += w.inner
			return
		}
		if lr.partial == nil {
			lr.partial = map[string]*partialLine{}
		}
		lr.partial[w.stream] = &partialLine{text: w.inner, pos: pos, w: w}
		return
	}
	if p := lr.partial[w.stream]; p != nil {
		// The line is the runtime's from its first record on.
		last := w.inner
		w, pos = p.w, p.pos
		w.inner = p.text + last
		w.partial = false
		delete(lr.partial, w.stream)
	}
	lr.entry(w.inner, pos, &w)
}
