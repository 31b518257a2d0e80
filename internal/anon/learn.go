package anon

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// fieldKinds are the struct fields, by name, whose string values are
// names, and the kind of name each holds.
var fieldKinds = map[string]string{
	"Node": "node", "NodeName": "node", "Hostname": "host", "HostName": "host", "Host": "host",
	"Namespace": "namespace", "Pod": "pod", "PodName": "pod",
	"Cluster": "cluster", "ClusterName": "cluster",
}

// kubeKinds are the kinds of the names of the objects of model.Kube's
// lists, by field name.
var kubeKinds = map[string]string{
	"Services": "svc", "Endpoints": "svc", "EndpointSlices": "slice", "Pods": "pod", "Nodes": "node",
	"Leases": "lease", "ConfigMaps": "cm", "DaemonSets": "ds", "Ingresses": "ing",
	"Namespaces": "namespace", "NetworkPolicies": "netpol", "Events": "event",
}

var (
	objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()
	selectorType   = reflect.TypeFor[metav1.LabelSelector]()
)

// Learn adds the names snap holds: its nodes and hosts (from the bundle's
// layout and from every record that names one), its Kubernetes objects'
// names and namespaces (and the workloads that own them), and the
// clusters it names.
func (a *Anonymizer) Learn(snap *model.Snapshot) {
	if snap == nil {
		return
	}
	kube := reflect.ValueOf(snap.Kube)
	for i := range kube.NumField() {
		f := kube.Type().Field(i)
		kind, ok := kubeKinds[f.Name]
		if !ok || kube.Field(i).Kind() != reflect.Slice {
			continue
		}
		list := kube.Field(i)
		for j := range list.Len() {
			a.learnObject(kind, list.Index(j))
		}
	}
	a.learn(reflect.ValueOf(snap).Elem(), map[uintptr]bool{})
}

// learnObject adds the name, namespace and owners of one Kubernetes
// object (a struct embedding a type with metav1.ObjectMeta).
func (a *Anonymizer) learnObject(kind string, v reflect.Value) {
	meta, ok := findMeta(v, 3)
	if !ok {
		return
	}
	m := meta.Interface().(metav1.ObjectMeta)
	if kind == "event" {
		return // an event's name is its object's and a suffix: the object is named on its own
	}
	a.addName(kind, m.Name)
	a.addName("namespace", m.Namespace)
	for _, o := range m.OwnerReferences {
		a.addName(strings.ToLower(o.Kind), o.Name)
	}
	for k, v := range m.Labels {
		a.learnLabel(k, v)
	}
}

// learnLabel adds the value of an application's label (app=cart), if it
// is long enough to be told from the words and numbers around it.
func (a *Anonymizer) learnLabel(k, v string) {
	if appLabels[k] && len(v) >= 3 && strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz") {
		a.addName("app", v)
	}
}

// learnSelector adds the applications a label selector names.
func (a *Anonymizer) learnSelector(s metav1.LabelSelector) {
	for k, v := range s.MatchLabels {
		a.learnLabel(k, v)
	}
	for _, e := range s.MatchExpressions {
		for _, v := range e.Values {
			a.learnLabel(e.Key, v)
		}
	}
}

// appLabels are the labels whose values name an application (and so
// appear in selectors: app=cart).
var appLabels = map[string]bool{
	"app": true, "k8s-app": true, "run": true, "name": true,
	"app.kubernetes.io/name": true, "app.kubernetes.io/instance": true, "app.kubernetes.io/part-of": true,
}

// findMeta finds the metav1.ObjectMeta of v, looking depth structs deep.
func findMeta(v reflect.Value, depth int) (reflect.Value, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || depth == 0 {
		return v, false
	}
	if v.Type() == objectMetaType {
		return v, true
	}
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			if m, ok := findMeta(v.Field(i), depth-1); ok {
				return m, true
			}
		}
	}
	return v, false
}

// addName adds name unless it is not one: empty, or with characters no
// name has (an address with a port, a path, a sentence).
func (a *Anonymizer) addName(kind, name string) {
	if name == "" || strings.ContainsAny(name, ":/ \t\n\"'=,") || len(name) > 253 {
		return
	}
	a.AddName(kind, name)
}

// LearnFrom adds the names v holds (a report, a finding): in fields named
// as fieldKinds lists, in objects' positions ("Kind namespace/name", in
// fields named Object and map entries keyed "object") and in kube-proxy's
// rule comments.
func (a *Anonymizer) LearnFrom(v any) {
	if v == nil {
		return
	}
	a.learn(reflect.ValueOf(v), map[uintptr]bool{})
}

// learn walks v for the fields fieldKinds lists.
func (a *Anonymizer) learn(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		a.learn(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() {
			a.learn(v.Elem(), seen)
		}
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return
		}
		if k := v.Type().Elem().Kind(); k != reflect.Struct && k != reflect.Pointer && k != reflect.Interface {
			return
		}
		for i := range v.Len() {
			a.learn(v.Index(i), seen)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			if iter.Key().String() == "object" && iter.Value().Kind() == reflect.String {
				a.LearnObject(iter.Value().String())
			} else if k := iter.Value().Kind(); k == reflect.Struct || k == reflect.Pointer || k == reflect.Interface || k == reflect.Slice {
				a.learn(iter.Value(), seen)
			}
		}
	case reflect.Struct:
		t := v.Type()
		if t == selectorType {
			a.learnSelector(v.Interface().(metav1.LabelSelector))
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.String {
				switch f.Name {
				case "Object":
					a.LearnObject(fv.String())
				case "Comment":
					a.learnComment(fv.String())
				default:
					if kind, ok := fieldKinds[f.Name]; ok {
						a.addName(kind, fv.String())
					}
				}
				continue
			}
			a.learn(fv, seen)
		}
	}
}

// objectRef matches an object as positions name it: "Kind namespace/name"
// or "Kind name".
var objectRef = lazyre.New(`^([A-Z][A-Za-z]*) (?:([a-z0-9][a-z0-9.-]*)/)?([A-Za-z0-9][A-Za-z0-9._-]*)$`)

// serviceComment matches the start of kube-proxy's rule comments:
// "namespace/service:port".
var serviceComment = lazyre.New(`^([a-z0-9][a-z0-9-]*)/([a-z0-9][a-z0-9.-]*)(?::|\s|$)`)

// LearnObject adds the names of an object named as positions name it,
// "Kind namespace/name" or "Kind name" (model.ObjectName).
func (a *Anonymizer) LearnObject(ref string) {
	m := objectRef.FindStringSubmatch(ref)
	if m == nil {
		return
	}
	kind := strings.ToLower(m[1])
	if k, ok := kubeKinds[m[1]+"s"]; ok {
		kind = k
	}
	if m[1] == "Event" {
		return
	}
	a.addName("namespace", m[2])
	a.addName(kind, m[3])
}

// learnComment adds the namespace and Service kube-proxy names at the
// start of a rule's comment.
func (a *Anonymizer) learnComment(c string) {
	if m := serviceComment.FindStringSubmatch(c); m != nil {
		a.addName("namespace", m[1])
		a.addName("svc", m[2])
	}
}
