//go:build !unix

package main

import "os"

// terminalWidth is not known here: tables are fitted to $COLUMNS or the
// default width.
func terminalWidth(*os.File) (int, bool) { return 0, false }
