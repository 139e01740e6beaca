package main

import "github.com/mcpdrill/mcpdrill/internal/reap"

// init makes mcpdrill, on Linux, the reaper of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER), so that what a server leaves behind, a
// grandchild in a session of its own included, re-parents here and is
// ended and reaped when the session ends (package reap). The library
// packages never do this themselves. A refusal (a seccomp filter) is no
// failure: orphans then go to init, and the marked ones are ended all the
// same.
func init() { _ = reap.Subreaper() }
