package browser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// descendants returns the live processes under pid, found through /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range alive() {
		if pp := parent(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// alive lists the processes that run and are not zombies.
func alive() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && running(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// stat returns the fields of /proc/pid/stat after the command name.
func stat(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		return strings.Fields(s[i+1:])
	}
	return nil
}

func running(pid int) bool {
	f := stat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func parent(pid int) int {
	if f := stat(pid); len(f) > 1 {
		n, _ := strconv.Atoi(f[1])
		return n
	}
	return 0
}

func TestCloseEndsEveryProcess(t *testing.T) {
	exe := Require(t)
	b, err := Start(t.Context(), exe, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(t.Context(), filepath.Join("testdata", "report.html"), Desktop, time.Minute); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if b.PID() == 0 {
		b.Close()
		t.Fatal("no browser process id")
	}
	procs := append([]int{b.PID()}, descendants(b.PID())...)
	if len(procs) < 2 {
		t.Errorf("the browser started no child process: %v", procs)
	}
	b.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, p := range procs {
			if running(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still running 10s after Close: %v of %v", left, procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTimeLimitEndsTheBrowser(t *testing.T) {
	exe := Require(t)
	// Long enough for Chromium to start on a loaded machine.
	const limit = 10 * time.Second
	b, err := Start(t.Context(), exe, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pid := b.PID()
	deadline := time.Now().Add(limit + 15*time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("browser %d still runs 15s past its %s limit", pid, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := b.Load(t.Context(), filepath.Join("testdata", "report.html"), Desktop, 10*time.Second); err == nil {
		t.Error("a page loaded in a browser past its time limit")
	}
}
