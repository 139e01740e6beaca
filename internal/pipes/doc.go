// Package pipes starts a child process on plain pipes and reports its exit
// status, and sizes the kernel buffers of the pipes a relay reads and
// writes. A large frame crosses a 64 KiB pipe (Linux's default) in 16
// hand-offs between writer and reader; a 1 MiB pipe takes it in one, which
// is most of what a stdio relay costs at that size.
package pipes
