// Package proc is how a study runs other people's programs: the servers it
// scans (study run, study verify) and the package managers that install
// them (study install). It owns the one allow-listed environment they all
// get (Env), bounded runs that leave no process behind (Run, Kill), the
// tail of what a program printed (Tail), and the bounded pool the study's
// jobs run on (Each).
package proc
