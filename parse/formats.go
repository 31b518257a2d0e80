package parse

import (
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/netfilter"
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
		netfilter.IPVSadmFormat,
		netfilter.IPTablesSaveFormat,
		netfilter.IPTablesListFormat,
		netfilter.IPTablesRulesFormat,
		netfilter.NFTFormat,
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
		netfilter.ConntrackFormat,
		netfilter.ConntrackStatsFormat,
		settingsFormat,
		probesFormat,
		sessionFormat,
	}
}
