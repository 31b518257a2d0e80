package rules

import (
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// iptablesBinary reads what an iptables binary says of itself in its
// messages ("iptables-restore v1.8.4 (legacy): ..."): its name, the
// numbers of its version and the backend in parentheses, "" when it
// prints none. It returns the version ("1.8.4") and the backend it
// speaks: nf_tables for an -nft binary or one that says so, legacy for a
// -legacy one, one that says so, or one before 1.8 (always legacy); ""
// for a 1.8 binary that does not say.
func iptablesBinary(tool, major, minor, patch, mark string) (version, backend string) {
	version = strings.TrimSuffix(major+"."+minor+"."+patch, ".")
	maj, _ := strconv.Atoi(major)
	mnr, _ := strconv.Atoi(minor)
	switch {
	case mark == "nf_tables" || strings.Contains(tool, "-nft"):
		backend = model.BackendNFT
	case mark == "legacy" || strings.Contains(tool, "-legacy") || maj == 1 && mnr < 8:
		backend = model.BackendLegacy
	}
	return version, backend
}
