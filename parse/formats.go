package parse

import (
	"github.com/netmortem/netmortem/parse/format"
)

// Format is one input format netmortem reads (see package format).
type Format = format.Format

// Source names the input being parsed (see package format).
type Source = format.Source

// Formats returns every format netmortem reads, in the order they are tried
// when two sniff with the same score. The list is explicit.
func Formats() []*Format {
	return []*Format{
		captureFormat,
		sysctlFormat,
		sysctlJSONFormat,
		componentFlagsFormat,
		containersFormat,
		describeFormat,
		kubeTableFormat,
		klogFormat,
		etcdLogFormat,
		jsonLogFormat,
		logfmtFormat,
		nginxAccessFormat,
		nginxErrorFormat,
		dmesgFormat,
		corednsLogFormat,
		ipvsadmFormat,
		iptablesSaveFormat,
		iptablesListFormat,
		iptablesRulesFormat,
		nftFormat,
		kubeFormat,
		tcpdumpTextFormat,
		tsharkTextFormat,
		ssFormat,
		netstatFormat,
		neighFormat,
		addrFormat,
		routeFormat,
		neighJSONFormat,
		addrJSONFormat,
		routeJSONFormat,
		conntrackFormat,
		conntrackStatsFormat,
		settingsFormat,
		probesFormat,
		sessionFormat,
	}
}
