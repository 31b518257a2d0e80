package host

import (
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Containers reads container listings: `docker ps` and `docker ps -a` (the
// default table: CONTAINER ID, IMAGE, COMMAND, CREATED, STATUS, PORTS,
// NAMES, with columns aligned by spaces or, as pasted into web pages,
// separated by single spaces; also lines grep'd without the header), and
// `crictl ps -a` (CONTAINER, IMAGE, CREATED, STATE, NAME, ATTEMPT, POD ID,
// POD). Shell prompts, node markers and docker's own messages ("Error
// response from daemon") are skipped; other lines are errors.
func Containers(r io.Reader, name string) ([]model.Container, error) {
	return format.ReadAll(r, name, readContainers)
}

var (
	// dockerIDRe is a short or full container ID at the start of a row.
	dockerIDRe = lazyre.New(`^[0-9a-f]{12}(?:[0-9a-f]{52})?$`)
	// dockerStatusRe finds the STATUS column after the CREATED column.
	dockerStatusRe = lazyre.New(`\s(Up|Exited|Created|Restarting|Paused|Dead|Removal In Progress)\b`)
	exitCodeRe     = lazyre.New(`^(?:Exited|Restarting) \((-?\d+)\)`)
	crictlStates   = map[string]string{"Running": "up", "Exited": "exited", "Created": "created", "Unknown": "unknown"}
)

func readContainers(r io.Reader, src *format.File, errs *model.ErrorList) []model.Container {
	var out []model.Container
	crictl := false
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		trimmed := l.Trimmed
		switch {
		case strings.HasPrefix(trimmed, "CONTAINER ID"):
			crictl = false
			return
		case strings.HasPrefix(trimmed, "CONTAINER ") && strings.Contains(trimmed, "ATTEMPT"):
			crictl = true
			return
		case strings.HasPrefix(trimmed, "Error response from daemon"), strings.HasPrefix(trimmed, "Cannot connect to the Docker daemon"):
			return
		}
		var c model.Container
		var ok bool
		if crictl {
			c, ok = crictlRow(trimmed)
		} else {
			c, ok = dockerRow(trimmed)
		}
		if !ok {
			l.Errorf("%w: expected a container row (ID, IMAGE, COMMAND, CREATED, STATUS, NAMES)", format.ErrSyntax)
			return
		}
		c.Node, c.Pos = l.Node, l.Pos()
		out = append(out, c)
	})
	return out
}

// dockerRow reads one row of `docker ps`.
func dockerRow(line string) (model.Container, bool) {
	c := model.Container{ExitCode: -1}
	f := strings.Fields(line)
	if len(f) < 5 || !dockerIDRe.MatchString(f[0]) {
		return c, false
	}
	c.ID, c.Image = f[0], f[1]
	rest := strings.TrimSpace(line[strings.Index(line, f[1])+len(f[1]):])
	// COMMAND is quoted; docker cuts it short with "…" before the closing quote.
	if strings.HasPrefix(rest, `"`) {
		end := strings.Index(rest[1:], `"`)
		if end < 0 {
			return c, false
		}
		c.Command = rest[1 : end+1]
		rest = strings.TrimSpace(rest[end+2:])
	}
	f = strings.Fields(rest)
	if len(f) < 2 {
		return c, false
	}
	c.Name = f[len(f)-1]
	rest = strings.TrimSpace(strings.TrimSuffix(rest, c.Name))
	loc := dockerStatusRe.FindStringSubmatchIndex(" " + rest)
	if loc == nil {
		return c, false
	}
	c.Created = strings.TrimSpace(rest[:loc[2]-1])
	status := rest[loc[2]-1:]
	// PORTS, when present, follow the status: "0.0.0.0:80->80/tcp, :::80->80/tcp".
	if i := strings.Index(status, "->"); i >= 0 || strings.Contains(status, "/tcp") || strings.Contains(status, "/udp") {
		words := strings.Fields(status)
		for j, w := range words {
			if strings.Contains(w, "->") || strings.HasSuffix(strings.TrimSuffix(w, ","), "/tcp") || strings.HasSuffix(strings.TrimSuffix(w, ","), "/udp") {
				status = strings.Join(words[:j], " ")
				break
			}
		}
	}
	c.Status = text.CollapseSpace(status)
	c.State = strings.ToLower(strings.Fields(c.Status)[0])
	if c.State == "removal" {
		c.State = "dead"
	}
	if m := exitCodeRe.FindStringSubmatch(c.Status); m != nil {
		c.ExitCode, _ = strconv.Atoi(m[1])
	}
	kubeNames(&c)
	return c, true
}

// kubeNames reads the Kubernetes names from a dockershim container name:
// k8s_<container>_<pod>_<namespace>_<uid>_<attempt>.
func kubeNames(c *model.Container) {
	parts := strings.Split(c.Name, "_")
	if len(parts) != 6 || parts[0] != "k8s" {
		return
	}
	n, err := strconv.Atoi(parts[5])
	if err != nil {
		return
	}
	c.KubeContainer, c.Pod, c.Namespace, c.Attempt = parts[1], parts[2], parts[3], n
}

// crictlRow reads one row of `crictl ps -a`: CONTAINER IMAGE CREATED STATE
// NAME ATTEMPT POD ID [POD [NAMESPACE]].
func crictlRow(line string) (model.Container, bool) {
	c := model.Container{ExitCode: -1}
	f := strings.Fields(line)
	if len(f) < 7 {
		return c, false
	}
	c.ID, c.Image = f[0], f[1]
	// CREATED is "2 minutes ago", "About an hour ago": up to "ago".
	i := 2
	for i < len(f) && f[i] != "ago" {
		i++
	}
	if i >= len(f)-3 {
		return c, false
	}
	c.Created = strings.Join(f[2:i+1], " ")
	st, ok := crictlStates[f[i+1]]
	if !ok {
		return c, false
	}
	c.Status, c.State = f[i+1], st
	c.Name, c.KubeContainer = f[i+2], f[i+2]
	n, err := strconv.Atoi(f[i+3])
	if err != nil {
		return c, false
	}
	c.Attempt = n
	if len(f) > i+5 {
		c.Pod = f[i+5]
	}
	if len(f) > i+6 {
		c.Namespace = f[i+6]
	}
	return c, true
}

// sniffContainers scores text whose rows look like docker or crictl
// listings.
func sniffContainers(_ string, head []byte) int {
	header := false
	rows, total, _ := text.SniffLines(head, 100, nil, func(line string) text.Match {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "CONTAINER ID") && strings.Contains(t, "IMAGE") && strings.Contains(t, "NAMES"),
			strings.HasPrefix(t, "CONTAINER ") && strings.Contains(t, "ATTEMPT") && strings.Contains(t, "POD ID"):
			header = true
			return text.Hit
		}
		if _, ok := dockerRow(t); ok {
			return text.Hit
		}
		return text.Miss
	})
	score := text.RatioScore(rows, total, 80)
	if header && score > 0 {
		score = 85
	}
	return score
}

// ContainersFormat reads container listings: docker ps and crictl ps.
var ContainersFormat = &format.Format{
	Name:    "containers",
	Kind:    model.KindContainers,
	Command: "docker ps -a, crictl ps -a",
	Doc: "kubelet's `k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT` names give pod, namespace and " +
		"restart attempt",
	Sniff: sniffContainers,
	Parse: format.Records(readContainers, func(s *model.Snapshot, out []model.Container) { s.Containers = append(s.Containers, out...) }, ""),
}
