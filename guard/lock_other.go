//go:build !unix && !windows

package guard

import (
	"errors"
	"os"
)

// errNoLock: this system has no file locks the store can rely on.
var errNoLock = errors.New("file locking is not supported on this system")

func lockFile(*os.File, bool) error { return errNoLock }

func unlockFile(*os.File) error { return errNoLock }
