package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/testutil"
)

// kubectl -n kube-system get cm kube-proxy -oyaml pasted with its prompt
// (kubeadm #2205) and cut before the ConfigMap's kind and metadata: the
// command names the object, config.conf holds the KubeProxyConfiguration.
func TestKubectlPromptTruncatedConfigMap(t *testing.T) {
	rel := "fixtures/real/troubleshoot/kubeadm-issue2205_kubectl-get-cm-kube-proxy-oyaml_dualstack-mode-empty.yaml.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	if sc := sniffKube(rel, b); sc < 80 {
		t.Errorf("sniff = %d", sc)
	}
	snap := readKubeFile(t, rel)
	if len(snap.Kube.ConfigMaps) != 1 {
		t.Fatalf("%d ConfigMaps", len(snap.Kube.ConfigMaps))
	}
	cm := snap.Kube.ConfigMaps[0]
	if cm.Name != "kube-proxy" || cm.Namespace != "kube-system" || cm.Source.Pos.Line != 2 || cm.Source.Pos.Object != "ConfigMap kube-system/kube-proxy" {
		t.Errorf("ConfigMap %s/%s at %+v", cm.Namespace, cm.Name, cm.Source.Pos)
	}
	var conf struct {
		Kind        string `yaml:"kind"`
		Mode        string `yaml:"mode"`
		ClusterCIDR string `yaml:"clusterCIDR"`
		IPVS        struct {
			StrictARP *bool `yaml:"strictARP"`
		} `yaml:"ipvs"`
		IPTables struct {
			MasqueradeAll *bool `yaml:"masqueradeAll"`
		} `yaml:"iptables"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.conf"]), &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Kind != "KubeProxyConfiguration" || conf.Mode != "" || conf.ClusterCIDR != "10.244.0.0/16,fd3c::/48" ||
		conf.IPVS.StrictARP == nil || *conf.IPVS.StrictARP || conf.IPTables.MasqueradeAll == nil || *conf.IPTables.MasqueradeAll {
		t.Errorf("config.conf %+v", conf)
	}
}

// troubleshoot writes custom resources as YAML lists beside their JSON:
// each item is an object.
func TestKubectlYAMLList(t *testing.T) {
	in := "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: web\n    namespace: shop\n  spec:\n    clusterIP: 10.43.7.7\n" +
		"- apiVersion: k3s.cattle.io/v1\n  kind: Addon\n  metadata:\n    name: coredns\n    namespace: kube-system\n"
	if sc := sniffKube("x.yaml", []byte(in)); sc < 80 {
		t.Errorf("sniff = %d", sc)
	}
	snap, err := KubeObjects(strings.NewReader(in), "l.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Kube.Services) != 1 || snap.Kube.Services[0].Spec.ClusterIP != "10.43.7.7" || snap.Kube.Services[0].Source.Pos.Line != 1 {
		t.Errorf("services %+v", snap.Kube.Services)
	}
	// A YAML list that is not of objects is not claimed.
	if sc := sniffKube("x.yaml", []byte("- name: a\n  value: b\n- name: c\n")); sc != 0 {
		t.Errorf("plain list sniffed %d", sc)
	}
}
