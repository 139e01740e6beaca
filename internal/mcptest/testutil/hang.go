package testutil

import "time"

// Hang bounds a test's wait for something that must happen (an answer, an
// exit, a file written): long enough that only a hang reaches it on however
// loaded a machine, so that the bound is never what a test asserts. A wait
// a test expects to run out (a timeout under test, a settle after the last
// expected frame) is another matter: keep it short, and make sure that its
// running out early can only hide a fault, never report one.
const Hang = 2 * time.Minute
