# Redacts what looks like a credential in kubectl JSON, YAML manifests and
# command lines, line by line: the value of an environment variable whose
# name looks like a credential, the value of a key or flag whose name does
# (password, secret, token, credential, private key, API key), and
# kubectl's last-applied-configuration annotation. Booleans, numbers and
# absolute paths (--token-auth-file=/etc/...) are kept. What it hides reads
# ***HIDDEN***, which netmortem reads as an unknown value.
function credential(s) {
	return tolower(s) ~ /passw(or)?d|secret|token|credential|private[-_]?key|api[-_]?key/
}
# hidestring replaces the JSON string that starts right after position p
# of line (its opening quote included in the prefix).
function hidestring(line, p,    rest) {
	rest = substr(line, p + 1)
	if (match(rest, /^([^"\\]|\\.)*"/))
		return substr(line, 1, p) "***HIDDEN***\"" substr(rest, RLENGTH + 1)
	return substr(line, 1, p) "***HIDDEN***\""
}
function hide(s,    out, ls, rest) {
	out = ""
	for (;;) {
		ls = tolower(s)
		if (!match(ls, /(passw(or)?d|secret|token|credential|private[-_]?key|api[-_]?key)[a-z0-9_.-]*"?[ ]*[:=][ ]*"?/))
			break
		out = out substr(s, 1, RSTART + RLENGTH - 1)
		rest = substr(s, RSTART + RLENGTH)
		if (match(rest, /^[^]["\\ ,{}]+/)) {
			if (substr(rest, 1, RLENGTH) !~ /^(true|false|null|-?[0-9.]+|\/.*)$/) {
				out = out "***HIDDEN***"
				rest = substr(rest, RLENGTH + 1)
			}
		}
		s = rest
	}
	return out s
}
{
	line = $0
	if (match(line, /"name": *"[^"]*"/))
		last = substr(line, RSTART, RLENGTH)
	else if (match(line, /^[ \t-]*name: *[^ ]+/))
		last = substr(line, RSTART, RLENGTH)
	if (credential(last) && match(line, /"value": *"/)) {
		line = hidestring(line, RSTART + RLENGTH - 1)
	} else if (credential(last) && match(line, /^[ \t]*value: */)) {
		line = substr(line, 1, RSTART + RLENGTH - 1) "'***HIDDEN***'"
	} else if (match(line, /"kubectl\.kubernetes\.io\/last-applied-configuration": *"/)) {
		line = hidestring(line, RSTART + RLENGTH - 1)
	} else {
		line = hide(line)
	}
	print line
}
