package analyzer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

func suppressFindings() []Finding {
	mk := func(rule string, subj map[string]string) Finding {
		return Finding{Rule: rule, Subject: subj, Fingerprint: Fingerprint(rule, subj), Title: fmt.Sprint(rule, subj)}
	}
	return []Finding{
		mk("synack-reset", map[string]string{"node": "node1", "client": "10.0.0.5"}),
		mk("stale-dnat", map[string]string{"node": "node2", "object": "Service shop/web", "service_port": "http"}),
		mk("hairpin-drop", map[string]string{"node": "node1", "client": "10.244.1.7", "vip": "10.96.0.10:80"}),
		mk("network-policy-deny", map[string]string{"client": "10.244.2.3", "address": "10.244.1.7:8080", "object": "Pod shop/cart-1"}),
		mk("probe-restart-loop", map[string]string{"object": "Pod kube-system/etcd-cp-1", "container": "etcd"}),
		mk("conntrack-drops", map[string]string{"node": "node3", "namespace": "kube-system", "counter": "drop"}),
		mk("mtu-blackhole", map[string]string{"source": "fd00::1", "destination": "fd00::2"}),
	}
}

func keptRules(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return strings.Join(out, ",")
}

// Each selector, alone and with others (all must match).
func TestSuppressSelectors(t *testing.T) {
	fs := suppressFindings()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ig   Ignore
		want string // the rules suppressed
	}{
		{Ignore{Fingerprint: fs[1].Fingerprint}, "stale-dnat"},
		{Ignore{Rule: "hairpin-drop"}, "hairpin-drop"},
		{Ignore{Node: "node1"}, "synack-reset,hairpin-drop"},
		{Ignore{Namespace: "shop"}, "stale-dnat,network-policy-deny"},
		{Ignore{Namespace: "kube-system"}, "probe-restart-loop,conntrack-drops"},
		{Ignore{Object: "Service shop/web"}, "stale-dnat"},
		{Ignore{Object: "service shop/web"}, "stale-dnat"},
		{Ignore{Object: "shop/web"}, "stale-dnat"},
		{Ignore{Object: "Pod shop/web"}, ""},
		{Ignore{Object: "shop/cart-1"}, "network-policy-deny"},
		{Ignore{Address: "10.0.0.5"}, "synack-reset"},
		{Ignore{Address: "10.244.1.7"}, "hairpin-drop,network-policy-deny"},
		{Ignore{Address: "10.244.1.7:8080"}, "network-policy-deny"},
		{Ignore{Address: "10.244.1.7:9090"}, ""},
		{Ignore{Address: "10.96.0.10:80"}, "hairpin-drop"},
		{Ignore{Address: "10.244.0.0/16"}, "hairpin-drop,network-policy-deny"},
		{Ignore{Address: "fd00::2"}, "mtu-blackhole"},
		{Ignore{Rule: "synack-reset", Node: "node1"}, "synack-reset"},
		{Ignore{Rule: "synack-reset", Node: "node2"}, ""},
		{Ignore{Node: "node1", Address: "10.244.1.7"}, "hairpin-drop"},
		{Ignore{Rule: "stale-dnat", Namespace: "shop", Object: "shop/web", Node: "node2", Fingerprint: fs[1].Fingerprint}, "stale-dnat"},
		{Ignore{}, ""},
	} {
		c := &Config{Ignore: []Ignore{tc.ig}}
		c.Ignore[0].Reason = "r"
		c.Ignore[0].Pos = "c.yaml:3"
		kept, sup, warns := c.Suppress(fs, now)
		if got := keptRules(suppressedFindings(sup)); got != tc.want {
			t.Errorf("%+v suppresses %q, want %q", tc.ig, got, tc.want)
		}
		if len(kept)+len(sup) != len(fs) || len(warns) != 0 {
			t.Errorf("%+v: %d kept, %d suppressed, warnings %v", tc.ig, len(kept), len(sup), warns)
		}
		for _, s := range sup {
			if s.By != "c.yaml:3" || s.Reason != "r" {
				t.Errorf("suppressed by %q (%q)", s.By, s.Reason)
			}
		}
	}
}

func suppressedFindings(sup []Suppressed) []Finding {
	var out []Finding
	for _, s := range sup {
		out = append(out, s.Finding)
	}
	return out
}

// An entry applies through its expiry day (UTC), and from the next day on
// suppresses nothing and warns with its position.
func TestSuppressExpiry(t *testing.T) {
	fs := suppressFindings()
	c := &Config{Ignore: []Ignore{{Rule: "synack-reset", Reason: "fix in May", Pos: "c.yaml:7",
		Expires: time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)}}}
	for _, tc := range []struct {
		now     time.Time
		expired bool
	}{
		{time.Date(2026, 5, 30, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 5, 31, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2026, 6, 1, 1, 0, 0, 0, time.FixedZone("CEST", 2*3600)), false}, // 23:00 UTC on the 31st
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), true},
	} {
		kept, sup, warns := c.Suppress(fs, tc.now)
		if tc.expired {
			want := IgnoreWarning{Pos: model.Pos{File: "c.yaml", Line: 7}, Message: "ignore entry expired on 2026-05-31 and no longer applies (reason: fix in May)"}
			if len(sup) != 0 || len(kept) != len(fs) || len(warns) != 1 || warns[0] != want ||
				warns[0].String() != "c.yaml:7: "+want.Message {
				t.Errorf("%s: %d suppressed, warnings %q", tc.now, len(sup), warns)
			}
		} else if len(sup) != 1 || len(warns) != 0 {
			t.Errorf("%s: %d suppressed, warnings %q", tc.now, len(sup), warns)
		}
	}
	// The first entry that matches is the one named.
	c = &Config{Ignore: []Ignore{{Node: "node1", Reason: "a"}, {Rule: "synack-reset", Reason: "b"}}}
	_, sup, _ := c.Suppress(fs, time.Now())
	if len(sup) != 2 || sup[0].By != "ignore[0]" || sup[0].Reason != "a" {
		t.Errorf("suppressed %+v", sup)
	}
	// A nil Config keeps everything.
	kept, sup, warns := (*Config)(nil).Suppress(fs, time.Now())
	if len(kept) != len(fs) || len(sup) != 0 || len(warns) != 0 {
		t.Errorf("nil config: %d kept", len(kept))
	}
}

// An entry that suppressed nothing is named, with its position; an entry
// that did, or that has expired (warned about already), is not.
func TestUnmatched(t *testing.T) {
	fs := suppressFindings()
	in := "ignore:\n  - rule: synack-reset\n    reason: a\n  - node: nowhere\n    reason: b\n" +
		"  - node: gone\n    reason: c\n    expires: 2020-01-01\n"
	c, err := LoadConfig(strings.NewReader(in), "c.yaml", configRules)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	_, sup, expired := c.Suppress(fs, now)
	if len(sup) == 0 || len(expired) != 1 || expired[0].Pos != (model.Pos{File: "c.yaml", Line: 6}) {
		t.Fatalf("suppressed %d, expired %+v", len(sup), expired)
	}
	got := c.Unmatched(sup, now)
	if len(got) != 1 || got[0].String() != "c.yaml:4: ignore entry matched no finding (reason: b)" {
		t.Errorf("unmatched %+v", got)
	}
	if got := c.Unmatched(nil, now); len(got) != 2 {
		t.Errorf("nothing suppressed: unmatched %+v, want both live entries", got)
	}
	if got := (*Config)(nil).Unmatched(nil, now); got != nil {
		t.Errorf("nil config: %+v", got)
	}
}

func TestSuppressBaseline(t *testing.T) {
	fs := suppressFindings()
	kept, sup := SuppressBaseline(fs, map[string]bool{fs[0].Fingerprint: true, fs[3].Fingerprint: true, "ffffffffffffffff": true}, "old.json")
	if keptRules(suppressedFindings(sup)) != "synack-reset,network-policy-deny" || len(kept) != len(fs)-2 {
		t.Errorf("suppressed %s, kept %d", keptRules(suppressedFindings(sup)), len(kept))
	}
	if sup[0].By != "baseline" || sup[0].Reason != "in the baseline old.json" {
		t.Errorf("why: %q %q", sup[0].By, sup[0].Reason)
	}
}
