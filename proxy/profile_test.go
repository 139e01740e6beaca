package proxy

import (
	"os"
	"runtime/pprof"
)

// profileEnv names a file: a role process (the proxy or relay of the
// benchmarks) writes its CPU profile there, so the proxy's own costs can be
// read with `go tool pprof` (the benchmark's profile covers only the client).
const profileEnv = "MCPDRILL_ROLE_CPUPROFILE"

// stopRoleProfile stops the role's profile (roles that end with os.Exit
// call it first).
var stopRoleProfile = func() {}

// startRoleProfile starts the role's CPU profile when asked; the returned
// function stops it.
func startRoleProfile(role string) func() {
	path := os.Getenv(profileEnv)
	if path == "" || (role != "proxy" && role != "http-proxy") {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return func() {}
	}
	stopRoleProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
	return stopRoleProfile
}
