// Package reap ends what a spawned server leaves behind.
//
// Killing a server's process group misses a descendant that called
// setsid(2) or setpgid(2): it has left the group. Mark tags a command's
// environment with a mark of its own before it starts; every descendant
// inherits it, whatever session or group it moves to. End, when the
// session is over, finds the processes that carry the mark, and their
// descendants, and ends them: SIGTERM, a grace period, SIGKILL, then it
// reaps those that were re-parented to this process.
//
// OwnGroup, TerminateGroup and KillGroup are the process-group half: a
// command in a group of its own, SIGTERM and SIGKILL to the whole group.
//
// Subreaper makes this process the reaper of its orphaned descendants, so
// that they re-parent here rather than to init. Nothing in this package
// calls it implicitly: a program opts in, once, early (the mcpdrill CLI
// does so in its main package).
//
// On Linux the marks are read from /proc/<pid>/environ. Elsewhere Mark,
// End and Subreaper do nothing, and a server's descendants are ended only
// by KillGroup.
package reap
