package host

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// LinkJSONFormat reads ip -j link.
var LinkJSONFormat = &format.Format{
	Name:    "ip-link-json",
	Kind:    model.KindLinks,
	Command: "ip -j link, ip -j -d link (the link's type and bridge port settings), also pretty-printed with -p",
	Doc:     ipJSONDoc,
	Sniff:   sniffIPJSON(isLinkEntry),
	Parse:   format.Records(readLinksJSON, func(s *model.Snapshot, out []model.Link) { s.Links = append(s.Links, out...) }, "links"),
}

// LinksJSON parses ip -j link (and -d): each entry as ip link's text line
// would be, with its address as the MAC of an ether link, its linkinfo's info_kind as the type, info_data's id and
// port as the VXLAN or Geneve id and UDP port, and info_slave_data's
// hairpin as the bridge port's.
func LinksJSON(r io.Reader, name string) ([]model.Link, error) {
	return format.ReadAll(r, name, readLinksJSON)
}

func isLinkEntry(e ipEntry) bool {
	return e.has("ifname") && e.has("mtu") && !e.has("addr_info")
}

func readLinksJSON(r io.Reader, src *format.File, errs *model.ErrorList) []model.Link {
	return linksOfEntries(ipEntriesOf(r, src, errs, isLinkEntry, "an ip -j link entry ({\"ifname\": ..., \"mtu\": ...})"), src, errs)
}

// linksOfAddrsJSON reads the links of ip -j addr's entries (each link's
// MTU, master and state), the addresses left to the address reader.
func linksOfAddrsJSON(r io.Reader, src *format.File) []model.Link {
	var errs model.ErrorList
	var es []ipEntry
	for _, e := range ipEntries(r, src.Name, &errs) {
		if e.has("ifname") && e.has("mtu") {
			es = append(es, e)
		}
	}
	return linksOfEntries(es, src, &errs)
}

// linksOfEntries reads ip -j link's entries as ip link's text lines would
// be.
func linksOfEntries(es []ipEntry, src *format.File, errs *model.ErrorList) []model.Link {
	var out []model.Link
	for _, e := range es {
		name := linkName(e.str("ifname"))
		if name == "" {
			errs.Addf(e.pos, "", "%w: ifname is not a link's name (a non-empty string)", format.ErrValue)
			continue
		}
		var f []string
		for _, k := range []string{"mtu", "master"} {
			if v := e.str(k); v != "" {
				f = append(f, k, v)
			}
		}
		if v := e.str("operstate"); v != "" {
			f = append(f, "state", v)
		}
		lk, err := linkLine(strings.Join(f, " "))
		if err != nil {
			errs.Addf(e.pos, "", "%w: %v", format.ErrSyntax, err)
			continue
		}
		if raw, ok := e.f["linkinfo"]; ok {
			var info struct {
				Kind string `json:"info_kind"`
				Data struct {
					ID   int `json:"id"`
					Port int `json:"port"`
				} `json:"info_data"`
				SlaveData struct {
					Hairpin *bool `json:"hairpin"`
				} `json:"info_slave_data"`
			}
			if err := json.Unmarshal(raw, &info); err != nil {
				errs.Addf(e.pos, "", "%w: linkinfo is not an object of ip -d link's fields: %v", format.ErrSyntax, err)
				continue
			}
			lk.Kind, lk.Hairpin = info.Kind, info.SlaveData.Hairpin
			if info.Kind == "vxlan" || info.Kind == "geneve" {
				lk.VNI, lk.Port = info.Data.ID, info.Data.Port
			}
		}
		if e.str("link_type") == "ether" {
			lk.MAC = strings.ToLower(e.str("address"))
		}
		lk.Node, lk.Dev, lk.Pos = src.Node, name, e.pos
		out = append(out, lk)
	}
	return out
}
