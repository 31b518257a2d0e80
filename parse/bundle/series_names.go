package bundle

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture"
)

// Which files may be one series: a capture file's series stem, which
// groups the files of one name but for their numbers, and the parts a
// group is split into, by the numbers that name capture points and by
// kind, before its runs are read (readGroup).

// seriesStem is a capture file's name with its rotation counter or
// timestamp taken out: tcpdump -C writes trace.pcap, trace.pcap1,
// trace.pcap2 ...; -G writes names from a strftime pattern; -z gzip (or
// bzip2, xz, zstd) compresses each file once it is written, the one being
// written still plain. A compression suffix goes, each run of digits
// becomes one '#', and those at the end go. Numbers that name a capture
// point (eth0, node1) are not told here from those that time it (T10 in
// an ISO time, Nov29, cap1764410000): splitGroup tells them apart by the
// files' times. The walk asks it of every file on disk, so it is written
// out rather than a regular expression's replacement.
func seriesStem(path string) string {
	base := trimCompression(filepath.Base(path))
	b := make([]byte, 0, len(base))
	for i := 0; i < len(base); i++ {
		if c := base[i]; !isDigit(c) {
			b = append(b, c)
		} else if i == 0 || !isDigit(base[i-1]) {
			b = append(b, '#')
		}
	}
	return filepath.Join(filepath.Dir(path), strings.TrimRight(string(b), "#"))
}

// trimCompression returns name without the suffix a compressor gives it.
func trimCompression(name string) string {
	for _, ext := range []string{".gz", ".bz2", ".xz", ".zst", ".zstd"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// splitGroup splits files, a group's in the order of their first packets,
// into the parts whose runs are read apart, each in that order: by the
// numbers of their names that name capture points (nameNumbers, those
// whose files interleave in time with the others': eth0-TIME.pcap and
// eth1-TIME.pcap rotated side by side), and then by kind (kindOf), so
// that a file of another kind named alike is read apart, rather than
// cutting a series it falls amid.
func splitGroup(files []groupFile) [][]groupFile {
	var out [][]groupFile
	for _, p := range partition(files, nameKey(files)) {
		out = append(out, partition(p, func(f groupFile) string { return kindOf(f.head) })...)
	}
	return out
}

// nameKey returns the key that tells the capture points of files apart:
// the values of their names' numbers (nameNumbers) at the places where
// the files of each value interleave in time with the others' files. A
// number that times a file (a day, an hour, an epoch) takes a new value
// as time goes on, and its files do not interleave; an interface's or a
// node's does. When the files' names do not all have as many numbers, or
// no place interleaves, every file has one key.
func nameKey(files []groupFile) func(groupFile) string {
	nums := map[string][]string{} // by file name
	n := -1
	for _, f := range files {
		nums[f.name] = nameNumbers(f.name)
		if n >= 0 && len(nums[f.name]) != n {
			return func(groupFile) string { return "" }
		}
		n = len(nums[f.name])
	}
	var places []int
	for k := range max(n, 0) {
		parts := partition(files, func(f groupFile) string { return nums[f.name][k] })
		if len(parts) <= maxNamed && interleaved(parts) {
			places = append(places, k)
		}
	}
	return func(f groupFile) string {
		var b strings.Builder
		for _, k := range places {
			b.WriteString(nums[f.name][k])
			b.WriteByte('|')
		}
		return b.String()
	}
}

// maxNamed is how many capture points one place of a name may tell apart:
// more values are a time's that comes round (the seconds of 10h59m54s),
// whose files interleave too.
const maxNamed = 16

// partition splits files by key, in the order each key first comes, each
// part in the order of files.
func partition(files []groupFile, key func(groupFile) string) [][]groupFile {
	at := map[string]int{}
	var out [][]groupFile
	for _, f := range files {
		k := key(f)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], f)
	}
	return out
}

// interleaved reports whether parts, each in the order of its files'
// first packets, and in the order of their first files', are two or more,
// one of which starts before another's last file does: capture points
// side by side, not one series named by the hour or the day.
func interleaved(parts [][]groupFile) bool {
	var end time.Time // the latest last file's start so far
	for i, p := range parts {
		if i > 0 && p[0].head.First.Before(end) {
			return true
		}
		if last := p[len(p)-1].head.First; last.After(end) {
			end = last
		}
	}
	return false
}

// nameNumbers returns the numbers of a file's name that may name its
// capture point rather than count or time it: each run of digits right
// after a letter inside a word (eth0, node1, ens33, and the 0 and the 3
// of enp0s3), but not after a letter that starts a word (the T10 of
// -T10:59), nor those that end the name (tcpdump -C's counter). Such
// numbers also time a file (Nov29, cap1764410000, 20261129T102144):
// nameKey trusts them only where the files' times say so.
func nameNumbers(path string) []string {
	base := trimCompression(filepath.Base(path))
	end := len(base)
	for end > 0 && isDigit(base[end-1]) {
		end--
	}
	var out []string
	for i := 2; i < end; i++ {
		if !isDigit(base[i]) || !isLetter(base[i-1]) || !(isLetter(base[i-2]) || isDigit(base[i-2])) {
			continue
		}
		j := i
		for j < end && isDigit(base[j]) {
			j++
		}
		out = append(out, base[i:j])
		i = j
	}
	return out
}

// kindOf returns what a capture's head says the files of its series
// share: their format and link types.
func kindOf(h capture.Head) string { return h.Format + "|" + h.LinkType }
