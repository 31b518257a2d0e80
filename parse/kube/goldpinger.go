package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// GoldpingerFormat reads goldpinger's /check_all results: every goldpinger
// pod's checks of every other, as the troubleshoot goldpinger collector
// stores them.
var GoldpingerFormat = &format.Format{
	Name:    "goldpinger",
	Kind:    model.KindPodChecks,
	Command: "goldpinger's /check_all (curl http://goldpinger:8080/check_all; troubleshoot's goldpinger collector)",
	Doc: "one check per checker and target pod under `responses.<pod>.response.podResults`: " +
		"pods, pod and host IPs, OK, the HTTP status (504 for a timeout), the error, " +
		"`response-time-ms` and `PingTime`, each at its line; a checker whose own request " +
		"failed (`OK: false` with an `error` and no podResults) is a warning at its line",
	Sniff: sniffGoldpinger,
	Parse: func(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		checks := readGoldpinger(r, src, &errs)
		snap.PodChecks = append(snap.PodChecks, checks...)
		return len(checks), errs.Err()
	},
}

// sniffGoldpinger knows check_all by its two top-level keys and the
// podResults of its responses.
func sniffGoldpinger(_ string, head []byte) int {
	t := bytes.TrimLeft(head, " \t\r\n")
	if !text.IsText(head) || len(t) == 0 || t[0] != '{' {
		return 0
	}
	if bytes.Contains(t, []byte(`"responses"`)) && bytes.Contains(t, []byte(`"podResults"`)) {
		return 95
	}
	return 0
}

// Goldpinger reads goldpinger /check_all JSON into its checks.
func Goldpinger(r io.Reader, name string) ([]model.PodCheck, error) {
	var errs model.ErrorList
	checks := readGoldpinger(r, &format.File{Name: name}, &errs)
	return checks, errs.Err()
}

func readGoldpinger(r io.Reader, src *format.File, errs *model.ErrorList) []model.PodCheck {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		line := 1
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		if errors.Is(err, io.EOF) {
			err = format.ErrTruncated
		}
		errs.Add(model.Pos{File: src.Name, Line: line}, "", fmt.Errorf("%w: not valid JSON: %v", format.ErrSyntax, err))
		return nil
	}
	root := doc.Content[0]
	pos := func(n *yaml.Node) model.Pos { return model.Pos{File: src.Name, Line: n.Line} }
	responses := mapValue(root, "responses")
	if root.Kind != yaml.MappingNode || responses == nil || responses.Kind != yaml.MappingNode {
		errs.Addf(pos(root), "", "%w: expected goldpinger's check_all object with \"responses\"", format.ErrSyntax)
		return nil
	}
	var out []model.PodCheck
	for i := 0; i+1 < len(responses.Content); i += 2 {
		from, resp := responses.Content[i].Value, responses.Content[i+1]
		results := mapValue(mapValue(resp, "response"), "podResults")
		if results == nil || results.Kind != yaml.MappingNode {
			if e := scalar(resp, "error"); e != "" {
				errs.Addf(pos(responses.Content[i]), "", "%w: %s could not run its checks: %s", format.ErrValue, from, e)
			} else {
				errs.Addf(pos(responses.Content[i]), "", "%w: %s: expected response.podResults", format.ErrSyntax, from)
			}
			continue
		}
		fromIP, fromHost := goldpingerAddr(resp, "PodIP"), goldpingerAddr(resp, "HostIP")
		for j := 0; j+1 < len(results.Content); j += 2 {
			key, res := results.Content[j], results.Content[j+1]
			if res.Kind != yaml.MappingNode {
				errs.Addf(pos(key), "", "%w: %s -> %s: expected an object", format.ErrSyntax, from, key.Value)
				continue
			}
			c := model.PodCheck{Tool: "goldpinger", From: from, FromIP: fromIP, FromHost: fromHost,
				To: key.Value, ToIP: goldpingerAddr(res, "PodIP"), ToHost: goldpingerAddr(res, "HostIP"),
				OK: scalar(res, "OK") == "true", Error: scalar(res, "error"), Pos: pos(key)}
			c.Status, _ = strconv.Atoi(scalar(res, "status-code"))
			if ms, err := strconv.ParseFloat(scalar(res, "response-time-ms"), 64); err == nil {
				c.Latency = time.Duration(ms * float64(time.Millisecond))
			}
			if t, err := time.Parse(time.RFC3339Nano, scalar(res, "PingTime")); err == nil {
				c.Time = t
			}
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos.Line < out[j].Pos.Line })
	return out
}

// goldpingerAddr reads an address field ("PodIP", "HostIP"); the zero
// Addr when absent or not an address.
func goldpingerAddr(m *yaml.Node, key string) netip.Addr {
	a, _ := netip.ParseAddr(scalar(m, key))
	return a
}
