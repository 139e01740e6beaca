package pipes

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ErrPipe marks a failure to make a pipe (no descriptors left, say), as
// opposed to a command that could not start.
var ErrPipe = errors.New("pipes: cannot make a pipe")

// Child holds this process's ends of a started command's pipes.
type Child struct {
	// Stdin writes to the command's standard input.
	Stdin *os.File
	// Stdout reads the command's standard output.
	Stdout *os.File
	// Stderr reads its standard error when Start was asked for it (nil
	// otherwise: cmd.Stderr is left as the caller set it).
	Stderr *os.File
}

// Option is a choice Start makes about a command's pipes.
type Option uint8

const (
	// Stderr makes a pipe for the command's standard error too; without
	// it cmd.Stderr is left as the caller set it.
	Stderr Option = 1 << iota
	// BlockingStdin leaves this process's end of the command's standard
	// input in blocking mode, written outside the runtime's poller, as a
	// process writes a pipe it inherits. A relay that reads its own stdin
	// blocking must write its child's this way too: a write that waits on
	// the poller hands the thread that watches the poller to a goroutine
	// which then blocks in that read, and nothing watches it until the
	// runtime's monitor looks, up to 10 ms later. A blocking write cannot be cut short by Close; it
	// ends when the command reads or exits.
	BlockingStdin
)

// Start starts cmd with its standard input and output, and with Stderr
// its standard error, on plain os.Pipe pipes: the command reads and
// writes them directly, with no copying goroutine of os/exec in between.
// The command's ends are closed here once it has started. On failure
// every pipe is closed and the error is ErrPipe's, or cmd.Start's as it
// came.
func Start(cmd *exec.Cmd, opts Option) (Child, error) {
	stderr := opts&Stderr != 0
	n := 2
	if stderr {
		n = 3
	}
	// ends[i] is {read end, write end} of the command's stdin, stdout and
	// stderr pipes; the command gets the read end of stdin and the write
	// ends of the others.
	var ends [3][2]*os.File
	closeAll := func() {
		for _, e := range ends {
			for _, f := range e {
				if f != nil {
					f.Close()
				}
			}
		}
	}
	for i := range n {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return Child{}, fmt.Errorf("%w: %w", ErrPipe, err)
		}
		ends[i] = [2]*os.File{r, w}
	}
	if opts&BlockingStdin != 0 {
		ends[0][1].Fd() // Fd puts the file in blocking mode
	}
	cmd.Stdin, cmd.Stdout = ends[0][0], ends[1][1]
	if stderr {
		cmd.Stderr = ends[2][1]
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return Child{}, err
	}
	ends[0][0].Close()
	ends[1][1].Close()
	c := Child{Stdin: ends[0][1], Stdout: ends[1][0]}
	if stderr {
		ends[2][1].Close()
		c.Stderr = ends[2][0]
	}
	return c, nil
}

// ExitStatus is the status a shell reports for cmd once waited for: its
// exit code, or 128 plus the signal that ended it; 1 when it never ran
// or its status is unknown and waitErr says it failed.
func ExitStatus(cmd *exec.Cmd, waitErr error) int {
	ps := cmd.ProcessState
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if waitErr != nil {
		return 1
	}
	return 0
}
