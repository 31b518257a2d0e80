package anon

import (
	"crypto/aes"
	"crypto/cipher"
	"net/netip"
)

// cryptoPAn is the prefix-preserving address anonymization of Xu, Fan,
// Ammar and Moon (Crypto-PAn): two addresses that share their first n bits
// are mapped to two addresses that share their first n bits, and to no
// more. Bit i of the result is bit i of the address flipped by the first
// bit of the AES encryption of the address's first i bits padded with a
// secret pad.
type cryptoPAn struct {
	block cipher.Block
	pad   [16]byte
}

// newCryptoPAn makes the scheme of a 32-byte key: the AES key, then the
// block that, encrypted, is the pad.
func newCryptoPAn(key [32]byte) *cryptoPAn {
	block, err := aes.NewCipher(key[:16])
	if err != nil {
		panic(err) // a 16-byte key is always accepted
	}
	c := &cryptoPAn{block: block}
	block.Encrypt(c.pad[:], key[16:])
	return c
}

// addr anonymizes a, bit by bit: the 32 bits of an IPv4 address, the 128
// of an IPv6 one.
func (c *cryptoPAn) addr(a netip.Addr) netip.Addr {
	if a.Is4() {
		b := a.As4()
		c.bits(b[:])
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	c.bits(b[:])
	return netip.AddrFrom16(b).WithZone(a.Zone())
}

// bits anonymizes the bits of addr in place.
func (c *cryptoPAn) bits(addr []byte) {
	orig := make([]byte, len(addr))
	copy(orig, addr)
	var in, out [16]byte
	for i := range len(orig) * 8 {
		// in: the first i bits of the address, then the pad's bits.
		copy(in[:], c.pad[:])
		for j := range i / 8 {
			in[j] = orig[j]
		}
		if r := i % 8; r > 0 {
			mask := byte(0xff) << (8 - r)
			in[i/8] = orig[i/8]&mask | c.pad[i/8]&^mask
		}
		c.block.Encrypt(out[:], in[:])
		if out[0]&0x80 != 0 {
			addr[i/8] ^= 0x80 >> (i % 8)
		}
	}
}
