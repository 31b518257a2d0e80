package parse

import (
	"slices"
	"sync"

	"github.com/netmortem/netmortem/parse/bundle"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/kube"
	"github.com/netmortem/netmortem/parse/logs"
	"github.com/netmortem/netmortem/parse/netfilter"
)

// Format is one input format netmortem reads (see package format).
type Format = format.Format

// File is the file being parsed (see package format).
type File = format.File

// Formats returns every format netmortem reads, in the order they are tried
// when two sniff with the same score. The list is explicit; the terminal
// session, which reads each command's output with the other formats, comes
// last.
func Formats() []*Format { return slices.Clone(registry()) }

// registry is the list Formats returns, made once so that every call gives
// the same formats.
var registry = sync.OnceValue(func() []*Format {
	list := []*Format{
		captureFormat,
		host.SysctlFormat,
		host.SysctlJSONFormat,
		kube.ComponentFlagsFormat,
		host.ContainersFormat,
		kube.DescribeFormat,
		kube.KubectlTableFormat,
		kube.EventsTableFormat,
		kube.DescribeEventsFormat,
		logs.KlogFormat,
		logs.EtcdLogFormat,
		logs.JSONLogFormat,
		logs.LogfmtFormat,
		logs.NginxAccessFormat,
		logs.NginxErrorFormat,
		logs.DmesgFormat,
		logs.CoreDNSLogFormat,
		logs.CRILogFormat,
		logs.DockerJSONLogFormat,
		logs.JournalFormat,
		logs.FelixLogFormat,
		logs.CiliumMonitorFormat,
		logs.HubbleObserveFormat,
		logs.GrepLogFormat,
		logs.ClientErrorsFormat,
		logs.NetErrorLinesFormat,
		logs.WeaveLogFormat,
		logs.GoLogFormat,
		netfilter.IPVSadmFormat,
		netfilter.IPVSTimeoutFormat,
		netfilter.IPTablesSaveFormat,
		netfilter.IPTablesListFormat,
		netfilter.IPTablesRulesFormat,
		netfilter.NFTFormat,
		netfilter.UFWStatusFormat,
		kube.KubectlFormat,
		kube.GoldpingerFormat,
		kube.EventLinesFormat,
		kube.VersionFormat,
		kube.DNSDebugFormat,
		tcpdumpTextFormat,
		tsharkTextFormat,
		host.SSFormat,
		host.NetstatFormat,
		host.NeighFormat,
		host.NeighCountFormat,
		host.ResolvConfFormat,
		host.AddrFormat,
		host.LinkFormat,
		host.HairpinFilesFormat,
		host.HairpinCatFormat,
		host.NstatFormat,
		host.NetstatStatsFormat,
		host.RouteFormat,
		host.RuleFormat,
		host.NeighJSONFormat,
		host.AddrJSONFormat,
		host.LinkJSONFormat,
		host.RouteJSONFormat,
		netfilter.ConntrackFormat,
		netfilter.ConntrackStatsFormat,
		netfilter.ConntrackEventsFormat,
		host.SettingsFormat,
		host.CNIConfFormat,
		host.ProbesFormat,
		host.ABFormat,
		host.LsmodFormat,
		host.CalicoStatusFormat,
		host.CiliumHealthFormat,
		host.ClientFormat,
	}
	// A session's commands are read with every other format but binary
	// captures, which no pasted text holds.
	others := slices.DeleteFunc(slices.Clone(list), func(f *Format) bool { return f == captureFormat })
	return append(list, bundle.SessionFormat(others))
})
