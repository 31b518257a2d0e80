package collect

// scriptTemplate is the collector script (text/template over WriteScript's
// data). Its shell is POSIX sh: it runs under dash and busybox sh.
const scriptTemplate = `#!/bin/sh
# shellcheck disable=SC2016 # command bodies are single-quoted on purpose: sh -c expands them
# netmortem collector, script version {{.Version}}: collects the network evidence of
# this Kubernetes node into one .tar.gz that netmortem analyze reads.
#
#   Run it as root on the node:  sh netmortem-collect.sh [OUTPUT_DIRECTORY]
#
# The archive is written to OUTPUT_DIRECTORY (default: $TMPDIR, else /tmp),
# and its path printed. The node is named by $NODE_NAME, else by hostname.
# Its files are gathered in $TMPDIR, else /tmp (else OUTPUT_DIRECTORY, when
# that is read-only): set TMPDIR where there is room for the capture.
#
# It only reads: it sets no sysctl, loads no kernel module and writes no
# firewall rule; what it makes stays in a temporary directory until the
# archive is written. Every command is bounded by a timeout ({{.Options.Timeout}} s) and
# skipped, with a note in the manifest, when its tool is missing.
{{- if .Options.Kubectl}} Secrets
# are never read; environment values, flags and keys that look like
# credentials are redacted.{{end}}
#
# Capture: {{if .Options.CaptureSeconds}}{{.Options.CaptureSeconds}} s, at most {{.Options.CaptureMB}} MB{{if .Options.Filter}}, filter {{.Options.Filter}}{{end}}{{else}}none{{end}}. Cluster objects (kubectl): {{if .Options.Kubectl}}yes{{else}}no{{end}}.

set -u
umask 077
PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin:/usr/local/bin
export PATH

nm_say() { printf 'netmortem-collect: %s\n' "$*" >&2; }
nm_has() { command -v "$1" >/dev/null 2>&1; }

nm_node=${NODE_NAME:-$(hostname 2>/dev/null || uname -n)}
nm_node=$(printf '%s' "$nm_node" | tr -c 'A-Za-z0-9._-' '_')
case $nm_node in
''|.*) nm_node=node$nm_node ;;
esac
nm_dest=${1:-${TMPDIR:-/tmp}}
if [ ! -d "$nm_dest" ]; then
	nm_say "$nm_dest: not a directory"
	exit 2
fi
nm_stamp=$(date -u +%Y%m%dT%H%M%SZ)
nm_work=$(mktemp -d "${TMPDIR:-/tmp}/netmortem-collect.XXXXXX" 2>/dev/null) ||
	nm_work=$(mktemp -d "$nm_dest/netmortem-collect.XXXXXX") || {
	nm_say "cannot make a temporary directory in ${TMPDIR:-/tmp} or $nm_dest: set TMPDIR to a writable directory"
	exit 1
}
trap 'rm -rf "$nm_work"' EXIT
trap 'exit 130' INT TERM HUP
nm_name=netmortem-$nm_node-$nm_stamp
nm_root=$nm_work/$nm_name
nm_manifest=$nm_root/{{.Manifest}}
mkdir -p "$nm_root/$nm_node" "$nm_work/bin" || exit 1

# nm_redact hides what looks like a credential (see the program below).
cat > "$nm_work/redact.awk" <<'NM_REDACT_AWK'
{{.Redact}}NM_REDACT_AWK
printf '#!/bin/sh\nexec awk -f %s\n' "$nm_work/redact.awk" > "$nm_work/bin/nm_redact"
chmod 700 "$nm_work/bin/nm_redact"
PATH=$nm_work/bin:$PATH

if nm_has timeout; then nm_to=timeout; else nm_to=; fi

# nm_line writes one manifest line: its fields separated by tabs.
# It writes the line at once: the capture, in the background, writes its
# lines while the other commands write theirs.
nm_tab=$(printf '\t')
nm_line() {
	nm_buf=$1
	shift
	for nm_f in "$@"; do
		nm_buf=$nm_buf$nm_tab$(printf '%s' "$nm_f" | tr '\t\n' '  ')
	done
	printf '%s\n' "$nm_buf" >> "$nm_manifest"
}

# nm_run NAME DIR FILE TIMEOUT TOOLS COVERED_BY PATHS SHELL BODY runs one
# command of the catalog into DIR/FILE and records it in the manifest.
nm_run() {
	nm_n=$1 nm_dir=$2 nm_file=$3 nm_t=$4 nm_tools=$5 nm_cov=$6 nm_paths=$7 nm_shell=$8 nm_body=$9
	for nm_x in $nm_tools; do
		if ! nm_has "$nm_x"; then
			nm_line skipped "$nm_n" "$nm_x not found"
			return 0
		fi
	done
	if [ -n "$nm_cov" ]; then
		nm_all=1
		for nm_x in $nm_cov; do nm_has "$nm_x" || nm_all=0; done
		if [ "$nm_all" = 1 ]; then
			nm_line skipped "$nm_n" "covered by $nm_cov"
			return 0
		fi
	fi
	if [ -n "$nm_paths" ]; then
		nm_any=0
		for nm_x in $nm_paths; do [ -e "$nm_x" ] && nm_any=1; done
		if [ "$nm_any" = 0 ]; then
			nm_line skipped "$nm_n" "absent: $nm_paths"
			return 0
		fi
	fi
	out=$nm_root/$nm_dir/$nm_file
	export out
	case $nm_file in
	*/)
		mkdir -p "$out"
		$nm_to ${nm_to:+$nm_t} sh -c "$nm_body" > "$nm_work/$nm_n.out" 2> "$nm_work/$nm_n.err"
		nm_st=$?
		if [ -z "$(ls -A "$out")" ]; then rmdir "$out"; nm_rel=-; else nm_rel=$nm_dir/$nm_file; fi
		;;
	*)
		mkdir -p "$(dirname "$out")"
		case $nm_body in
		*'"$out"'*) $nm_to ${nm_to:+$nm_t} sh -c "$nm_body" > "$nm_work/$nm_n.out" 2> "$nm_work/$nm_n.err" ;;
		*) $nm_to ${nm_to:+$nm_t} sh -c "$nm_body" >> "$out" 2> "$nm_work/$nm_n.err" ;;
		esac
		nm_st=$?
		if [ -s "$out" ]; then nm_rel=$nm_dir/$nm_file; else rm -f "$out"; nm_rel=-; fi
		;;
	esac
	nm_line ran "$nm_n" "$nm_st" "$nm_rel" "$nm_shell"
	if [ "$nm_st" = 124 ] && [ -n "$nm_to" ]; then
		nm_line note "$nm_n" "stopped by its time bound (exit status 124)"
	fi
	if [ -s "$nm_work/$nm_n.err" ]; then
		head -n 5 "$nm_work/$nm_n.err" | while IFS= read -r nm_l; do nm_line stderr "$nm_n" "$nm_l"; done
		if [ "$nm_rel" = - ]; then
			IFS= read -r nm_l < "$nm_work/$nm_n.err"
			nm_say "$nm_n gave no output: $nm_l"
		fi
	fi
	return 0
}

: > "$nm_manifest"
nm_line '# netmortem collector manifest: what ran on this node to make this bundle (docs/collect.md)'
nm_line format netmortem-collect
nm_line script-version {{.Version}}
nm_line node "$nm_node"
nm_line started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
nm_line options "capture-seconds={{.Options.CaptureSeconds}}" "capture-size={{.Options.CaptureMB}}MB" "filter="{{sq .Options.Filter}} "kubectl={{.Options.Kubectl}}" "conntrack-max={{.Options.ConntrackMax}}" "log-lines={{.Options.LogLines}}" "timeout={{.Options.Timeout}}s"
if [ -z "$nm_to" ]; then
	nm_line note timeout "timeout not found: commands run without a time bound"
fi
{{- range .Node}}
{{- if eq .Name "capture"}}
nm_say "capturing for {{$.Options.CaptureSeconds}} s while the other commands run"
nm_run {{template "args" .}} &
nm_capture=$!
{{- end}}
{{- end}}
{{- range .Versions}}
if nm_has {{first .Shell}}{{if .Path}} && [ -e {{sq .Path}} ]{{end}}; then
	nm_line tool {{sq .Tool}} "$($nm_to ${nm_to:+10} sh -c {{sq .Shell}} 2>&1 | head -n 1)"
fi
{{- end}}
{{- if .Options.Kubectl}}
if [ -z "${KUBECONFIG:-}" ] && [ -r /etc/kubernetes/admin.conf ]; then
	KUBECONFIG=/etc/kubernetes/admin.conf
	export KUBECONFIG
fi
{{- end}}
{{- range .Node}}{{if ne .Name "capture"}}
nm_say {{sq (printf "running %s" .Name)}}
nm_run {{template "args" .}}
{{- end}}{{end}}
{{- range .Cluster}}
nm_say {{sq (printf "running %s" .Name)}}
nm_run {{template "args" .}}
{{- end}}
if [ -n "${nm_capture:-}" ]; then
	nm_say "waiting for the capture to end"
	wait "$nm_capture"
fi
nm_line ended "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
# A full disk makes writes fail without stopping the script: the manifest
# then lacks its last line, and the archive would be incomplete.
nm_last=
while IFS= read -r nm_l; do nm_last=$nm_l; done < "$nm_manifest"
case $nm_last in
ended*) ;;
*)
	nm_say "cannot write in ${nm_work%/*} (is it full?): no archive written; set TMPDIR to a directory with room"
	exit 1
	;;
esac

nm_tar=$nm_dest/$nm_name.tar.gz
if ! tar -C "$nm_work" -cf - "$nm_name" | gzip -c > "$nm_tar"; then
	nm_say "cannot write $nm_tar"
	rm -f "$nm_tar"
	exit 1
fi
nm_say "done: analyze it with netmortem analyze $nm_tar"
printf '%s\n' "$nm_tar"
{{define "args"}}{{sq .Name}} {{.Dir}} {{sq .File}} {{.Timeout}} {{sq (join .Tools " ")}} {{sq (join .CoveredBy " ")}} {{sq (join .Paths " ")}} {{sq .Record}} {{sq .Body}}{{end}}
`
