// Package kube reads the cluster's side of the evidence as kubectl prints
// it: objects in JSON or YAML (and static pod manifests), the text tables
// of kubectl get, kubectl describe, and the flags of the cluster's
// components. Each file holds one format: its Format, its sniffer and its
// parser; the tables of kubectl get span table*.go.
package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// objects makes the Parse of a format that reads Kubernetes objects from
// text (tables, describe): the objects read are added to the snapshot and
// counted as its records.
func objects(read func(io.Reader, *format.File, *model.ErrorList) *model.Kube) func(context.Context, io.Reader, *format.File, *model.Snapshot) (int, error) {
	return func(_ context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		k := read(r, src, &errs)
		snap.Kube.Merge(k)
		return k.Len(), errs.Err()
	}
}

// KubectlFormat reads Kubernetes objects as kubectl prints them with -o json or
// -o yaml, and static pod manifests.
var KubectlFormat = &format.Format{
	Name: "kubectl",
	Kind: model.KindKube,
	Command: "kubectl get KIND -o json / -o yaml (objects, List, typed lists such as ServiceList, " +
		"several YAML documents, JSON arrays of objects as troubleshoot writes custom resources)," +
		" static pod manifests (/etc/kubernetes/manifests/*.yaml)",
	Doc: "Services, Endpoints, EndpointSlices, Pods, Nodes, ComponentStatuses, Leases, Events, " +
		"ConfigMaps, DaemonSets, Ingresses, Namespaces and NetworkPolicies (networking.k8s.io/v1) are decoded with the " +
		"k8s.io/api types; other kinds are counted and skipped. An empty List's `items: null` is " +
		"an empty list; an object printed without its kind (client-go types marshalled by " +
		"troubleshoot's run collectors and its CRD list) is known by its fields (items, " +
		"involvedObject, a Pod's containers, a CRD's group and names). A Pod whose container runs" +
		" kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet or etcd " +
		"also gives that component's flags, each at its own manifest line",
	Sniff: sniffKube,
	Parse: func(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		n := readKube(ctx, r, src, snap, &errs)
		return n, errs.Err()
	},
}

var (
	yamlTopKeyRe = lazyre.New(`^(apiVersion|kind):\s*\S`)
	jsonKindRe   = lazyre.New(`"(apiVersion|kind)"\s*:\s*"`)
)

func sniffKube(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	// A paste may start with the prompt of the kubectl get that printed
	// it, which names the kind when the object was cut before it.
	get := false
	for {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 && len(rest) > 0 {
			head = rest
			continue
		}
		_, cmd, ok := text.Prompt(string(line))
		if !ok || len(rest) == 0 {
			break
		}
		_, get = kubectlGetOf(cmd)
		head = rest
	}
	t := bytes.TrimSpace(head)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if len(jsonKindRe.FindAll(head, 2)) == 2 {
			return 95
		}
		return 0
	}
	seen := map[string]bool{}
	items := false
	list := bytes.HasPrefix(t, []byte("- "))
	for _, line := range text.HeadLines(head, 400) {
		if m := yamlTopKeyRe.FindStringSubmatch(line); m != nil {
			seen[m[1]] = true
		}
		if m := yamlListKeyRe.FindStringSubmatch(line); list && m != nil {
			// A YAML list of objects, as troubleshoot writes custom
			// resources.
			seen[m[1]] = true
		}
		switch {
		case line == "items:":
			items = true
		case items && yamlItemKindRe.MatchString(line):
			// kubectl -o yaml prints a List's own kind after its
			// items, beyond the head of a long one: an item's kind
			// will do.
			seen["kind"] = true
		}
	}
	if seen["apiVersion"] && (seen["kind"] || get) {
		return 95
	}
	return 0
}

var yamlListKeyRe = lazyre.New(`^(?:- |  )(apiVersion|kind):\s*\S`)

var yamlItemKindRe = lazyre.New(`^(?:- |  )kind:\s*[A-Z]\w*\s*$`)

// KubeObjects reads Kubernetes objects from kubectl's JSON or YAML output:
// single objects, Lists (kind: List, or typed lists such as ServiceList),
// several YAML documents separated by "---", and JSON arrays of objects.
// An empty List's items may be null. An object printed without its kind (a
// client-go type marshalled by a Go program) is known by its fields: a
// List by its items, an Event by involvedObject, a Pod by its containers,
// a CustomResourceDefinition, an API resource list. Services, Endpoints,
// EndpointSlices, Pods, Nodes, ComponentStatuses, Leases, Events, ConfigMaps,
// DaemonSets, Ingresses, Namespaces and NetworkPolicies (networking.k8s.io/v1)
// are kept, each with the
// line of its first field and its "Kind namespace/name"; other kinds are
// counted and skipped. A Pod whose container runs a cluster component (a
// static pod manifest such as kube-apiserver.yaml) also yields that
// component's command line, each flag with its own line. name is used in
// positions.
func KubeObjects(r io.Reader, name string) (*model.Snapshot, error) {
	var errs model.ErrorList
	snap := &model.Snapshot{}
	readKube(context.Background(), r, &format.File{Name: name}, snap, &errs)
	return snap, errs.Err()
}

var yamlLineRe = lazyre.New(`line (\d+)`)

func readKube(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot, errs *model.ErrorList) int {
	r, prompt := leadingPrompts(r)
	cmd := src.Command
	if prompt != "" {
		cmd = prompt
	}
	// An object cut short before its kind (a paste of kubectl get cm NAME
	// -o yaml) is known by the command that printed it.
	get, _ := kubectlGetOf(cmd)
	depth := &jsonDepth{r: r}
	dec := yaml.NewDecoder(depth)
	n := 0
	docLine := 1 // the first line the next document can start on
	for {
		// The run's end stops the reader, not this loop: a document
		// read whole before it is read, and the stream's end tells
		// that it was the last.
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && ctx.Err() != nil {
			// The read stopped: the document is cut there, not invalid.
			*errs = append(*errs, model.Stopped(model.Pos{File: src.Name}, ctx.Err()))
			return n
		}
		if err != nil {
			// yaml.v3 names the line of most errors; for the others
			// (an unknown anchor ...) the document's start is the best
			// position known.
			pos := model.Pos{File: src.Name, Line: docLine}
			if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
				pos.Line, _ = strconv.Atoi(m[1])
			}
			if cut := depth.cut(); cut != nil {
				err = cut
			}
			errs.Add(pos, "", fmt.Errorf("not valid JSON or YAML: %w", err))
			break
		}
		if len(doc.Content) == 0 {
			continue // empty document
		}
		root := doc.Content[0]
		docLine = root.Line + 1 // at least: where a next document could start
		if listWithoutKind(root) {
			errs.Add(model.Pos{File: src.Name, Line: root.Line}, "", fmt.Errorf(
				"%w: the List has items but no kind: kubectl writes its kind and metadata after the items, so the text ends inside them",
				format.ErrTruncated))
		}
		if root.Kind == yaml.SequenceNode {
			// A JSON array of objects, as troubleshoot writes custom
			// resources and the API's resource lists.
			for _, it := range root.Content {
				n += kubeNode(it, get, src, snap, errs)
			}
			continue
		}
		n += kubeNode(root, get, src, snap, errs)
	}
	return n
}

// inferKind names the kind of an object printed without its kind, as Go
// programs that marshal client-go types write them (troubleshoot's run
// collectors, its CustomResourceDefinition list): from the fields only
// that kind has. "" when the shape says nothing.
func inferKind(node *yaml.Node) string {
	spec := mapValue(node, "spec")
	switch {
	case mapValue(node, "items") != nil:
		return "List"
	case mapValue(node, "groupVersion") != nil && mapValue(node, "resources") != nil:
		return "APIResourceList"
	case mapValue(node, "involvedObject") != nil:
		return "Event"
	case mapValue(spec, "containers") != nil:
		return "Pod"
	case mapValue(spec, "group") != nil && mapValue(spec, "names") != nil:
		return "CustomResourceDefinition"
	}
	return ""
}

// mapValue returns the value node of key in a mapping node.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(m *yaml.Node, key string) string {
	if v := mapValue(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// kubeNode reads one object (or List) node; itemKind is the kind implied by
// a typed List for items that omit theirs.
func kubeNode(node *yaml.Node, get kubectlGet, src *format.File, snap *model.Snapshot, errs *model.ErrorList) int {
	pos := model.Pos{File: src.Name, Line: node.Line}
	if node.Kind != yaml.MappingNode {
		errs.Addf(pos, "", "expected a Kubernetes object (a mapping with apiVersion and kind)")
		return 0
	}
	itemKind := get.kind
	kind := scalar(node, "kind")
	if kind == "" {
		kind = itemKind
	}
	if kind == "" {
		kind = inferKind(node)
	}
	if strings.HasSuffix(kind, "List") && kind != "APIResourceList" {
		items := mapValue(node, "items")
		if items == nil || items.Tag == "!!null" {
			return 0 // Go marshals an empty List's items as null
		}
		if items.Kind != yaml.SequenceNode {
			errs.Addf(model.Pos{File: src.Name, Line: items.Line}, "", "items: expected a list")
			return 0
		}
		n := 0
		for _, it := range items.Content {
			n += kubeNode(it, kubectlGet{kind: strings.TrimSuffix(kind, "List")}, src, snap, errs)
		}
		return n
	}
	if kind == "" {
		errs.Addf(pos, "", "object without a kind")
		return 0
	}
	meta := mapValue(node, "metadata")
	ns, name := scalar(meta, "namespace"), scalar(meta, "name")
	if meta == nil && kind == get.kind {
		ns, name = get.namespace, get.name // the object was cut before its metadata
	}
	pos.Object = model.ObjectName(kind, ns, name)
	src.Count(kind, 1)

	list, ok := kubeList(&snap.Kube, kind)
	if !ok {
		return 0 // counted in Details, not modelled
	}
	o := reflect.New(list.Type().Elem()).Elem()
	if err := decodeNode(node, o.Field(0).Addr().Interface()); err != nil {
		errs.Addf(pos, "", "%s: %v", kind, err)
		return 0
	}
	if om, ok := o.Field(0).Addr().Interface().(interface {
		GetName() string
		SetName(string)
		SetNamespace(string)
	}); ok && om.GetName() == "" && name != "" {
		om.SetName(name)
		om.SetNamespace(ns)
	}
	ksrc := model.Source{Pos: pos, Node: src.Node}
	switch kind {
	case "Pod":
		ksrc.Lines = containerLines(node)
	case "NetworkPolicy":
		ksrc.Lines = policyRuleLines(node)
	}
	o.FieldByName("Source").Set(reflect.ValueOf(ksrc))
	list.Set(reflect.Append(list, o))
	if kind == "Pod" {
		snap.Components = append(snap.Components, staticPodComponents(node, src, pos)...)
	}
	return 1
}

// kubeList returns the list of k that holds the objects of kind: model.Kube
// keeps one list per kind it models, whose elements embed the k8s.io/api
// type of that name (model.Service embeds corev1.Service) beside their
// Source.
func kubeList(k *model.Kube, kind string) (reflect.Value, bool) {
	v := reflect.ValueOf(k).Elem()
	for i := range v.NumField() {
		if l := v.Field(i); l.Type().Elem().Field(0).Name == kind {
			return l, true
		}
	}
	return reflect.Value{}, false
}

// decodeNode decodes a YAML (or JSON) node into a k8s.io/api type through
// JSON, so that the types' json tags and custom unmarshalers apply.
func decodeNode(node *yaml.Node, target any) error {
	var v any
	if err := node.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, target)
}

// jsonable turns the maps YAML decodes with non-string keys (labels such as
// "1: x") into string-keyed maps that encoding/json accepts.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

// containerLines records the lines of the containers' probes and commands
// in a Pod node, for evidence.
func containerLines(pod *yaml.Node) map[string]int {
	out := map[string]int{}
	for _, list := range []string{"initContainers", "containers"} {
		cs := mapValue(mapValue(pod, "spec"), list)
		if cs == nil || cs.Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range cs.Content {
			for _, f := range []string{"livenessProbe", "readinessProbe", "startupProbe", "command", "args", "image"} {
				if v := mapValue(c, f); v != nil {
					// The key's line: one line above a block value.
					line := v.Line
					if v.Kind != yaml.ScalarNode && line > 1 {
						line--
					}
					out[fmt.Sprintf("spec.%s[%d].%s", list, i, f)] = line
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// policyRuleLines records the line of each ingress and egress rule of a
// NetworkPolicy node, for evidence.
func policyRuleLines(pol *yaml.Node) map[string]int {
	out := map[string]int{}
	for _, list := range []string{"ingress", "egress"} {
		rs := mapValue(mapValue(pol, "spec"), list)
		if rs == nil || rs.Kind != yaml.SequenceNode {
			continue
		}
		for i, r := range rs.Content {
			out[fmt.Sprintf("spec.%s[%d]", list, i)] = r.Line
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// staticPodComponents returns the cluster components a Pod's containers run,
// with their flags from command and args. The manifest's own lines are kept
// for each flag.
func staticPodComponents(pod *yaml.Node, src *format.File, pos model.Pos) []model.Component {
	containers := mapValue(mapValue(pod, "spec"), "containers")
	if containers == nil || containers.Kind != yaml.SequenceNode {
		return nil
	}
	var out []model.Component
	for _, c := range containers.Content {
		var words []*yaml.Node
		for _, key := range []string{"command", "args"} {
			if seq := mapValue(c, key); seq != nil && seq.Kind == yaml.SequenceNode {
				words = append(words, seq.Content...)
			}
		}
		texts := make([]string, len(words))
		for i, w := range words {
			texts[i] = w.Value
		}
		comp, next := commandComponent(texts)
		if comp == "" {
			continue
		}
		cp := pos
		cp.Line = c.Line
		mc := model.Component{Node: src.Node, Name: comp, Pos: cp}
		for i := next; i < len(words); i++ {
			w := words[i]
			name, value, ok := strings.Cut(strings.TrimPrefix(w.Value, "--"), "=")
			if !strings.HasPrefix(w.Value, "--") {
				continue
			}
			if !ok && i+1 < len(words) && !strings.HasPrefix(words[i+1].Value, "-") {
				value = words[i+1].Value // "--flag", "value" as two items
				i++
			}
			mc.Args = append(mc.Args, model.Arg{Name: name, Value: value,
				Pos: model.Pos{File: src.Name, Line: w.Line, Object: pos.Object}})
		}
		out = append(out, mc)
	}
	return out
}
