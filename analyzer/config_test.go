package analyzer

import (
	"strings"
	"testing"
	"time"
)

var configRules = func() []*Rule {
	run := func(*Pass) error { return nil }
	return []*Rule{
		{Name: "synack-reset", Run: run, SubjectKeys: []string{"node", "client"}},
		{Name: "version-skew", Run: run, SubjectKeys: []string{"component"}},
		{Name: "stale-dnat", Run: run, SubjectKeys: []string{"node", "object", "service_port"}, ObjectKinds: []string{"Service"}},
		{Name: "probe-restart-loop", Run: run, SubjectKeys: []string{"object", "container"}, ObjectKinds: []string{"Pod"}},
		{Name: "timewait-churn", Run: run, Params: []Param{{Name: "min_timewait", Type: Integer, Default: 50, Range: AtLeast(1), Doc: "d"}}},
		{Name: "connection-skew", Run: run, Params: []Param{{Name: "alpha", Type: Number, Default: 0.001, Range: Between(0, 1), Doc: "d"},
			{Name: "min_attempts", Type: Integer, Default: 1, Range: AtLeast(1), Doc: "d"}}},
	}
}()

// Every error of a configuration file is "file:line: what was expected".
func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"rulez: {}\n", `c.yaml:1: the top level: unknown key "rulez" (did you mean "rules"?) (want rules or ignore)`},
		{"- a\n", `c.yaml:1: the top level: expected a mapping with the keys rules or ignore, got a list`},
		{"rules:\n  synack-rest: {}\n", `c.yaml:2: rules: unknown rule "synack-rest" (did you mean "synack-reset"?) (netmortem rules lists them)`},
		{"rules:\n  zzz: {}\n", `c.yaml:2: rules: unknown rule "zzz" (netmortem rules lists them)`},
		{"rules: [a]\n", `c.yaml:1: rules: expected a mapping, got a list`},
		{"rules:\n  synack-reset: true\n", `c.yaml:2: rules.synack-reset: expected a mapping with the keys disabled, severity or params, got "true"`},
		{"rules:\n  synack-reset:\n    sevrity: error\n", `c.yaml:3: rules.synack-reset: unknown key "sevrity" (did you mean "severity"?) (want disabled, severity or params)`},
		{"rules:\n  timewait-churn:\n    params:\n      min_timewai: 3\n", `c.yaml:4: rules.timewait-churn.params: unknown parameter "min_timewai" (did you mean "min_timewait"?) of rule timewait-churn (want min_timewait)`},
		{"rules:\n  synack-reset:\n    params:\n      x: 3\n", `c.yaml:4: rules.synack-reset.params: unknown parameter "x": rule synack-reset has no parameters`},
		{"rules:\n  timewait-churn:\n    params:\n      min_timewait: 2.5\n", `c.yaml:4: rules.timewait-churn.params.min_timewait: expected an integer >= 1, got "2.5"`},
		{"rules:\n  timewait-churn:\n    params:\n      min_timewait: lots\n", `c.yaml:4: rules.timewait-churn.params.min_timewait: expected an integer >= 1, got "lots"`},
		{"rules:\n  connection-skew:\n    params:\n      alpha: 2\n", `c.yaml:4: rules.connection-skew.params.alpha: expected a number > 0 and < 1, got "2"`},
		{"rules:\n  connection-skew:\n    params:\n      alpha: 0\n", `c.yaml:4: rules.connection-skew.params.alpha: expected a number > 0 and < 1, got "0"`},
		{"rules:\n  connection-skew:\n    params:\n      min_attempts: -5\n", `c.yaml:4: rules.connection-skew.params.min_attempts: expected an integer >= 1, got "-5"`},
		{"rules:\n  connection-skew:\n    params:\n      alpha: [1]\n", `c.yaml:4: rules.connection-skew.params.alpha: expected a number > 0 and < 1, got a list`},
		{"rules:\n  synack-reset:\n    disabled: yes\n", `c.yaml:3: rules.synack-reset.disabled: expected true or false, got "yes"`},
		{"rules:\n  synack-reset:\n    severity: critical\n", `c.yaml:3: rules.synack-reset.severity: expected info, warning or error, got "critical"`},
		{"rules:\n  synack-reset: {}\n  synack-reset: {}\n", `c.yaml:3: rules: "synack-reset" given twice (first at line 2)`},
		{"rules:\n  synack-reset: {\n", `c.yaml:2: did not find expected node content`},
		{"rules:\n  synack-reset: \"abc\n", `c.yaml:2: found unexpected end of stream`},
		{"rules:\n  a: b\x01\n", `c.yaml:2: control characters are not allowed`},
		{"ignore: {}\n", `c.yaml:1: ignore: expected a list of entries, got a mapping`},
		{"ignore:\n  - n1\n", `c.yaml:2: ignore entry: expected a mapping with the keys fingerprint, rule, node, namespace, object, address, reason or expires, got "n1"`},
		{"ignore:\n  -\n", `c.yaml:2: ignore entry: expected a mapping with the keys fingerprint, rule, node, namespace, object, address, reason or expires, got nothing`},
		{"ignore:\n  - reason: x\n", `c.yaml:2: ignore entry has no selector: expected at least one of fingerprint, rule, node, namespace, object or address`},
		{"ignore:\n  - rule: synack-reset\n", `c.yaml:2: ignore entry has no reason: expected reason: why these findings are suppressed`},
		{"ignore:\n  - rule: synack-reset\n    reason: r\n    expires: tomorrow\n", `c.yaml:4: ignore.expires: expected a date YYYY-MM-DD, got "tomorrow"`},
		{"ignore:\n  - rule: synack-reset\n    reason: r\n    expires: 2026-02-30\n", `c.yaml:4: ignore.expires: expected a date YYYY-MM-DD, got "2026-02-30"`},
		{"ignore:\n  - address: 10.0.0\n    reason: r\n", `c.yaml:2: ignore.address: expected an IP, IP:port or CIDR prefix, got "10.0.0"`},
		{"ignore:\n  - object: web\n    reason: r\n", `c.yaml:2: ignore.object: expected "Kind namespace/name" or "namespace/name", got "web"`},
		{"ignore:\n  - object: Services kube-system/kube-dns\n    reason: r\n", `c.yaml:2: ignore.object: expected an object of a kind the rules' findings name, Pod or Service (did you mean "Service kube-system/kube-dns"?), got "Services kube-system/kube-dns"`},
		{"ignore:\n  - object: Deployment shop/web\n    reason: r\n", `c.yaml:2: ignore.object: expected an object of a kind the rules' findings name, Pod or Service, got "Deployment shop/web"`},
		{"ignore:\n  - rule: probe-restart-loop\n    object: Service shop/web\n    reason: r\n", `c.yaml:3: ignore.object: the findings of probe-restart-loop never match it: their objects are of the kind Pod`},
		{"ignore:\n  - fingerprint: abc\n    reason: r\n", `c.yaml:2: ignore.fingerprint: expected 16 hexadecimal digits (a finding's fingerprint), got "abc"`},
		{"ignore:\n  - rule: synack-rst\n    reason: r\n", `c.yaml:2: ignore.rule: expected a rule's name (did you mean "synack-reset"?), got "synack-rst"`},
		{"ignore:\n  - nod: n1\n    reason: r\n", `c.yaml:2: ignore entry: unknown key "nod" (did you mean "node"?) (want fingerprint, rule, node, namespace, object, address, reason or expires)`},
		{"ignore:\n  - node: [n1]\n    reason: r\n", `c.yaml:2: ignore.node: expected a string, got a list`},
		{"ignore:\n  - rule: version-skew\n    node: n1\n    reason: r\n", `c.yaml:3: ignore.node: the findings of version-skew never match it: their subject holds component, not node`},
		{"ignore:\n  - rule: version-skew\n    reason: r\n    address: 10.0.0.1\n", `c.yaml:4: ignore.address: the findings of version-skew never match it: their subject holds component, not address, client, backend, vip, source or destination`},
		{"ignore:\n  - rule: version-skew\n    reason: r\n    namespace: a\n", `c.yaml:4: ignore.namespace: the findings of version-skew never match it: their subject holds component, not namespace or object`},
		{"ignore:\n- rule: synack-reset\n  reason: r\n- node: n1\n  reason: r\n  expires: 2026-13-01\n", `c.yaml:6: ignore.expires: expected a date YYYY-MM-DD, got "2026-13-01"`},
	} {
		_, err := LoadConfig(strings.NewReader(tc.in), "c.yaml", configRules)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got  %v\n want %s", tc.in, err, tc.want)
		}
	}
}

// All the errors of a file are reported, each on its line.
func TestLoadConfigAllErrors(t *testing.T) {
	in := "rules:\n  synack-reset:\n    severity: high\n  nope: {}\nignore:\n  - rule: synack-reset\n"
	_, err := LoadConfig(strings.NewReader(in), "c.yaml", configRules)
	want := `c.yaml:3: rules.synack-reset.severity: expected info, warning or error, got "high"` + "\n" +
		`c.yaml:4: rules: unknown rule "nope" (netmortem rules lists them)` + "\n" +
		`c.yaml:6: ignore entry has no reason: expected reason: why these findings are suppressed`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestLoadConfigValid(t *testing.T) {
	in := `# comment
rules:
  synack-reset:
    severity: warning
    disabled: false
  timewait-churn:
    params:
      min_timewait: 500
  connection-skew:
    disabled: true
    params:
      alpha: 0.01
ignore:
  - fingerprint: 0123456789abcdef
    reason: known
  - rule: timewait-churn
    node: node1
    namespace: shop
    object: Service shop/web
    address: 10.0.0.0/8
    reason: "  until the fix  "
    expires: 2026-12-31
`
	c, err := LoadConfig(strings.NewReader(in), "dir/c.yaml", configRules)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rules["synack-reset"].Severity != Warning || c.Rules["timewait-churn"].Params["min_timewait"] != 500 ||
		!c.Rules["connection-skew"].Disabled || c.Rules["connection-skew"].Params["alpha"] != 0.01 {
		t.Errorf("rules %+v", c.Rules)
	}
	if len(c.Ignore) != 2 {
		t.Fatalf("ignore %+v", c.Ignore)
	}
	ig := c.Ignore[1]
	want := Ignore{Rule: "timewait-churn", Node: "node1", Namespace: "shop", Object: "Service shop/web", Address: "10.0.0.0/8",
		Reason: "until the fix", Expires: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), Pos: "dir/c.yaml:16", File: "dir/c.yaml", Line: 16}
	if ig != want {
		t.Errorf("ignore[1] = %+v\nwant %+v", ig, want)
	}
	if c.Ignore[0].Fingerprint != "0123456789abcdef" || c.Ignore[0].Pos != "dir/c.yaml:14" {
		t.Errorf("ignore[0] = %+v", c.Ignore[0])
	}
	for _, empty := range []string{"", "# nothing\n", "rules:\nignore:\n"} {
		c, err := LoadConfig(strings.NewReader(empty), "c.yaml", configRules)
		if err != nil || len(c.Rules) != 0 || len(c.Ignore) != 0 {
			t.Errorf("%q: %+v, %v", empty, c, err)
		}
	}
}

// A fingerprint selector is read in any case, as the findings' (lower
// case) match it; an object's kind too.
func TestLoadConfigCase(t *testing.T) {
	in := "ignore:\n  - fingerprint: 0C2B1AF2C35DCFBA\n    reason: r\n  - object: service shop/web\n    reason: r\n"
	c, err := LoadConfig(strings.NewReader(in), "c.yaml", configRules)
	if err != nil {
		t.Fatal(err)
	}
	f := Finding{Rule: "stale-dnat", Fingerprint: "0c2b1af2c35dcfba"}
	if c.Ignore[0].Fingerprint != "0c2b1af2c35dcfba" || !c.Ignore[0].Matches(&f) {
		t.Errorf("fingerprint selector %q does not match %s", c.Ignore[0].Fingerprint, f.Fingerprint)
	}
	g := Finding{Rule: "stale-dnat", Subject: map[string]string{"object": "Service shop/web"}}
	if !c.Ignore[1].Matches(&g) {
		t.Errorf("object selector %q does not match %v", c.Ignore[1].Object, g.Subject)
	}
	if c.Ignore[0].File != "c.yaml" || c.Ignore[0].Line != 2 || c.Ignore[1].Line != 4 {
		t.Errorf("positions %+v", c.Ignore)
	}
}

// --enable of a rule the configuration disables runs it.
func TestConfigEnable(t *testing.T) {
	c := &Config{}
	c.Disable("stale-dnat", "synack-reset")
	c.Enable("stale-dnat", "version-skew")
	if c.rule("stale-dnat").Disabled || !c.rule("synack-reset").Disabled || c.rule("version-skew").Disabled {
		t.Errorf("rules %+v", c.Rules)
	}
}
