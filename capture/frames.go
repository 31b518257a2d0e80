package capture

import (
	"context"
	"fmt"
	"io"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
)

// Frames reads the capture r (pcap or pcapng, perhaps gzip-compressed, as
// Read takes it) up to the highest of frames and returns a one-line decode
// of each of those frames, in the manner of tcpdump's one-line form:
// "2026-11-23 13:00:57.752490 IP 10.10.0.5.62768 > 10.244.2.7.53: Flags
// [S], seq 123, win 0, length 0". A frame the capture does not hold is
// left out of the map; a frame whose headers do not decode gets a line
// saying so. Reading stops at the highest frame asked for, or when ctx
// ends.
func Frames(ctx context.Context, r io.Reader, frames []int) (map[int]string, error) {
	want := map[int]bool{}
	last := 0
	for _, f := range frames {
		if f > 0 {
			want[f] = true
			last = max(last, f)
		}
	}
	out := map[int]string{}
	if last == 0 {
		return out, nil
	}
	src, err := pcapfile.NewReader(r)
	if err != nil {
		return out, err
	}
	defer src.Close()
	var d decode.Decoder
	for frame := 1; frame <= last; frame++ {
		if frame&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return out, err
			}
		}
		var rec pcapfile.Record
		err := src.Next(&rec)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("frame %d: truncated or corrupt packet record: %w", frame, err)
		}
		// Every frame up to the last is decoded, so that fragments
		// before a wanted one are reassembled as when the capture was read.
		data, link := rec.Data, src.LinkType(rec.Iface)
		p := decode.Packet{Time: rec.Time()}
		var decErr error
		if decode.SupportedLink(link) {
			decErr = d.Decode(link, data, rec.Cut(), &p)
		} else {
			decErr = fmt.Errorf("%s frames are not decoded", decode.LinkName(link))
		}
		if want[frame] {
			out[frame] = decode.OneLine(&p, len(data), decErr)
		}
	}
	return out, nil
}
