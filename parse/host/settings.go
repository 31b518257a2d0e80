package host

import (
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// SettingsFormat reads a kubespray inventory's group_vars.
var SettingsFormat = &format.Format{
	Name:    "kubespray-vars",
	Kind:    model.KindSettings,
	Command: "kubespray inventory group_vars (k8s-cluster.yml, addons.yml, kube-vip settings)",
	Doc: "the top-level `key: value` lines recognized by kubespray's variable names (`kube_vip_*`," +
		" `kube_proxy_*`, `metallb_*` ...), values unquoted and without trailing comments, Jinja " +
		"templates kept as written; a key whose value is a nested mapping or list gets an empty " +
		"value; later settings override earlier ones (`Snapshot.Setting`). " +
		"`lb-controller-conflict` reads `kube_vip_enabled`, `kube_vip_services_enabled` and " +
		"`metallb_enabled`",
	Sniff: sniffSettings,
	Parse: format.Records(readSettings, func(s *model.Snapshot, out []model.Setting) { s.Settings = append(s.Settings, out...) }, "settings"),
}

// Settings parses a kubespray inventory variables file (group_vars, such
// as k8s_cluster/k8s-cluster.yml or addons.yml): its top-level "key: value"
// lines, each a Setting of tool "kubespray". Values lose their quotes and a
// trailing comment; a key whose value is a nested mapping or list (the
// indented lines below it) gets an empty value, and the nested lines are
// not kept. Comments, document markers and shell prompts are skipped. A
// line that is none of these is reported with its position and the rest is
// read. name is used only in positions.
func Settings(r io.Reader, name string) ([]model.Setting, error) {
	return format.ReadAll(r, name, readSettings)
}

// settingRe matches a top-level YAML "key: value" line.
var settingRe = lazyre.New(`^([A-Za-z_][A-Za-z0-9_]*):(?:\s+(.*?))?\s*$`)

func readSettings(r io.Reader, src *format.File, errs *model.ErrorList) []model.Setting {
	name := src.Name
	var out []model.Setting
	l := text.NewLines(r, name, errs)
	for l.Next() {
		line := l.Text()
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t == "---" || t == "..." || strings.HasPrefix(t, "#"):
			continue
		case line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(t, "- "):
			continue // nested under the key above
		}
		if _, _, ok := text.Prompt(line); ok {
			continue
		}
		m := settingRe.FindStringSubmatch(line)
		if m == nil {
			l.Errorf("%w: expected a top-level \"key: value\" line", format.ErrSyntax)
			continue
		}
		out = append(out, model.Setting{Pos: l.Pos(), Tool: "kubespray", Key: m[1], Value: settingValue(m[2])})
	}
	return out
}

// settingValue unquotes a YAML scalar and drops a trailing comment.
func settingValue(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : end+1]
		}
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// kubesprayKey tells whether key is one of kubespray's inventory variables
// (by the prefixes of its cluster, network and add-on settings).
func kubesprayKey(key string) bool {
	for _, p := range []string{"kube_vip_", "kube_proxy_", "metallb_", "kube_network_plugin", "kube_version",
		"kube_pods_subnet", "kube_service_addresses", "kube_apiserver_", "loadbalancer_apiserver",
		"kubeconfig_localhost", "calico_", "flannel_", "cilium_", "kube_ovn_", "dns_mode", "enable_nodelocaldns",
		"nodelocaldns_", "container_manager", "etcd_deployment_type", "kubelet_", "ingress_nginx_",
		"cert_manager_", "helm_enabled", "cluster_name", "kube_network_node_prefix", "kube_log_level",
		"upstream_dns_servers", "resolvconf_mode", "ndots", "kube_feature_gates", "kube_encrypt_secret_data"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func sniffSettings(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	known, keys, other := 0, 0, 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || t == "---" || strings.HasPrefix(t, "#") || line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(t, "- ") {
			continue
		}
		m := settingRe.FindStringSubmatch(line)
		if m == nil {
			other++
			continue
		}
		keys++
		if m[1] == "apiVersion" || m[1] == "kind" {
			return 0 // a Kubernetes object
		}
		if kubesprayKey(m[1]) {
			known++
		}
	}
	if known < 2 || 2*known < keys || other > keys/4 {
		return 0
	}
	return 85
}
