//go:build linux

package reap

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// supported reports whether End can find marked processes here.
const supported = true

// killWait bounds how long End waits for killed processes to go.
const killWait = 5 * time.Second

// killRounds bounds how often End looks again for processes that a marked
// process forked while it was being ended.
const killRounds = 4

// Subreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER):
// a descendant orphaned by its parent's exit re-parents here rather than to
// init, and End can reap it.
func Subreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("reap: becoming a child subreaper: %w", err)
	}
	return nil
}

// proc is one process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid int
	start     uint64 // clock ticks after boot: tells a reused pid apart
	zombie    bool
}

func end(mark string, leader int, grace time.Duration) {
	self := os.Getpid()
	found := map[int]proc{}
	if grace > 0 {
		live := find(mark, self, found)
		if len(live) == 0 && len(found) == 0 {
			return
		}
		signal(live, unix.SIGTERM)
		waitGone(found, self, leader, grace)
	}
	for range killRounds {
		live := find(mark, self, found)
		if len(live) == 0 {
			break
		}
		signal(live, unix.SIGKILL)
		waitGone(found, self, leader, killWait)
	}
	waitGone(found, self, leader, killWait)
}

// find returns the live processes that carry mark, with their live
// descendants, and adds them and their zombie descendants to found.
func find(mark string, self int, found map[int]proc) []proc {
	procs := scan()
	children := map[int][]proc{}
	var queue []proc
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
		if !p.zombie && p.pid != self && hasMark(p.pid, mark) {
			queue = append(queue, p)
		}
	}
	var live []proc
	seen := map[int]bool{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.pid] || p.pid == self {
			continue
		}
		seen[p.pid] = true
		found[p.pid] = p
		if !p.zombie {
			live = append(live, p)
		}
		queue = append(queue, children[p.pid]...)
	}
	return live
}

// hasMark reports whether pid's initial environment holds mark.
func hasMark(pid int, mark string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	m := []byte(mark + "\x00")
	return bytes.HasPrefix(env, m) || bytes.Contains(env, append([]byte{0}, m...))
}

// signal sends sig to every process in ps (those that are gone are no
// matter).
func signal(ps []proc, sig unix.Signal) {
	for _, p := range ps {
		_ = unix.Kill(p.pid, sig)
	}
}

// waitGone waits up to timeout until every process in found is gone,
// reaping those that are zombies re-parented to self (never leader, which
// its exec.Cmd reaps). A pid now held by another process counts as gone.
func waitGone(found map[int]proc, self, leader int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		for pid, was := range found {
			p, ok := stat(pid)
			switch {
			case !ok || p.start != was.start:
				delete(found, pid)
			case !p.zombie:
			case p.ppid == self && pid != leader:
				var ws unix.WaitStatus
				if n, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); n == pid || err != nil {
					delete(found, pid)
				}
			default: // dead; its own parent reaps it
				delete(found, pid)
			}
		}
		if len(found) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// scan returns every process in /proc.
func scan() []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	ps := make([]proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// stat reads /proc/<pid>/stat; ok is false when the process is gone.
func stat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses "pid (comm) state ppid pgrp session … starttime …";
// comm may hold spaces and parentheses, so fields count from the last ')'.
func parseStat(pid int, b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, start: start, zombie: f[0] == "Z"}, true
}
