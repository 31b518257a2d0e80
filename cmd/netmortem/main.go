// Command netmortem analyzes the evidence of a Kubernetes network incident
// (packet captures, iptables and IPVS state, socket tables, sysctls, kubectl
// snapshots, logs) offline, and says what went wrong, pointing at the frame,
// line or object that proves it.
//
// Usage:
//
//	netmortem analyze [-o table|text|json|yaml|markdown|sarif|html] [--fail-on info|warning|error] [--timeout D] PATH...
//	netmortem inspect [-o table|json] PATH...
//	netmortem flows [-o table|json|csv] [--host IP] [--port N] [--state S] CAPTURE...
//	netmortem trace --dst IP:PORT [--src IP] [--from-node] BUNDLE...
//	netmortem diff [-o text|json] OLD NEW
//	netmortem batch [-j N] [--out FILE] [--resume] [--timeout D] BUNDLE|GLOB...
//	netmortem query rules|weeks|versions|fingerprints|bundles FP [--db TARGET] [--rule R] [--since T] [--until T] [-o table|json|csv] [FILE.jsonl...]
//	netmortem rules [-o table|json|markdown]
//	netmortem formats [-o table|json|markdown]
//	netmortem explain RULE
//	netmortem collect-script [--capture-seconds N] [--capture-size MB] [--filter EXPR] [--kubectl] [--conntrack-max N] [--doc]
//	netmortem version
//	netmortem completion bash|zsh|fish|powershell
//	netmortem help [COMMAND]
//
// Every command's --help gives its flags, examples and exit codes;
// `netmortem --version` prints the version, as `netmortem version` does.
//
// Names, paths and messages from the evidence are printed with their
// control characters and other non-printing runes escaped (`\n`, `\x1b`,
// `\u202e`) in every output meant for a terminal or for line-oriented tools;
// JSON and YAML keep them exact.
//
// Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
// 2 usage error; 3 an input could not be read (missing, refused because it
// is not a regular file or directory, a capture whose header cannot be
// read), the time budget ran out, the run was interrupted, a rule failed,
// or an internal error occurred. A crash of the Go runtime itself (out of
// memory) aborts the process with SIGABRT (status 134 in a shell), never 2.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
)

// Exit codes, the same for every subcommand and output format.
const (
	exitOK         = 0
	exitFindings   = 1
	exitUsage      = 2
	exitUnreadable = 3
)

func main() {
	sub := ""
	if len(os.Args) > 1 {
		sub = os.Args[1]
	}
	setCrashPolicy()
	setMemoryPolicy(sub)
	os.Exit(profiled(func() int { return run(os.Args[1:], os.Stdout, os.Stderr) }))
}

// setCrashPolicy makes a fatal error of the Go runtime (out of memory, a
// panic in a goroutine that nothing recovers) abort the process with
// SIGABRT instead of exiting with status 2, which is the usage-error code.
// A core file is written only where core dumps are enabled (ulimit -c).
// GOTRACEBACK in the environment still wins.
func setCrashPolicy() {
	if os.Getenv("GOTRACEBACK") == "" {
		debug.SetTraceback("crash")
	}
}

// profiled runs f, writing a CPU profile to the file named by
// NETMORTEM_CPUPROFILE and a heap profile at the end of the run to the one
// named by NETMORTEM_MEMPROFILE, when they are set (for `go tool pprof`).
func profiled(f func() int) int {
	if path := os.Getenv("NETMORTEM_MEMPROFILE"); path != "" {
		defer func() {
			runtime.GC() // the profile shows what the last collection found live
			out, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("heap").WriteTo(out, 0)
				if cerr := out.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "netmortem: heap profile: %v\n", err)
			}
		}()
	}
	path := os.Getenv("NETMORTEM_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "netmortem: cpu profile: %v\n", err)
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "netmortem: cpu profile: %v\n", err)
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

// run runs the command line args (without the program name) and returns
// the exit code. A panic in a command is an internal error: it is
// reported on stderr and gives exit 3, not a crash.
func run(args []string, stdout, stderr io.Writer) (code int) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	defer func() {
		if v := recover(); v != nil {
			name := "netmortem"
			if len(args) > 0 {
				name += " " + args[0]
			}
			escape.Fprintf(stderr, "%s: internal error: %s\n", name, fmt.Sprint(v))
			fmt.Fprintf(stderr, "%s\n", debug.Stack())
			code = exitUnreadable
		}
	}()
	c := &cli{stdout: stdout, stderr: stderr}
	return execute(newRoot(c), c, append([]string{}, args...))
}

// oneOf checks a flag value against its allowed values.
func oneOf(flag, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("invalid --%s %q (want %s)", flag, v, strings.Join(allowed, ", "))
}
