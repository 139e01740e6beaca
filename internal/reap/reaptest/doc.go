// Package reaptest is the hostile fixture of issue 21 F13 for tests: a
// server that leaves behind a grandchild in a session of its own
// (setsid), which a process-group kill cannot reach. The test binary plays
// every process (the fork-exec trick): call Run first in TestMain.
package reaptest
