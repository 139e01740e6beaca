package registry

import (
	"fmt"
	"regexp"
	"strings"
)

// A package's runtimeArguments are options to its runner (npx, uvx,
// docker), written by whoever published the server.json: registry text
// that would become a runner's option. The import passes only options it
// knows, and for containers drops those that widen a container's reach
// into the host unless the user asks for them (Options.ContainerReach).
//
// Abuses each has a test (runtime_test.go):
//   - an npx option that runs a command (--call=CMD, -c CMD) or fetches from
//     elsewhere (--registry=URL, --package=URL, --userconfig=FILE);
//   - a uvx option that installs something else (--from=git+URL, --with,
//     --index-url);
//   - a docker option that mounts the host (-v, --volume, --mount,
//     --volumes-from), lifts confinement (--privileged, --cap-add,
//     --security-opt, --device, --gpus, --userns, --cgroupns), joins the
//     host's namespaces (--network host, --pid, --ipc, --uts), reads a host
//     file (--env-file) or opens a port (-p, -P), in every spelling: two
//     tokens, --flag=value, bundled short flags (-itv /:/host), a boolean
//     with =true;
//   - an option the import does not know, in any runner (the row is
//     excluded: its meaning is unknown, and dropping it could leave its
//     value behind as an operand).

// npxOptions are the npx runtime options the import passes: -y (which the
// command line has anyway) and --node-options limited to memory settings.
var nodeMemoryOption = regexp.MustCompile(`^--(max-old-space-size|max-semi-space-size|stack-size)=[0-9]+$`)

// npxRuntime checks npx runtime arguments and returns those to pass.
func npxRuntime(tokens []string) ([]string, error) {
	var out []string
	for i := 0; i < len(tokens); i++ {
		t := tokens[i]
		switch {
		case t == "-y" || t == "--yes":
			// the command line says -y already
		case t == "--node-options" && i+1 < len(tokens) && nodeMemory(tokens[i+1]):
			out = append(out, "--node-options="+tokens[i+1])
			i++
		case strings.HasPrefix(t, "--node-options=") && nodeMemory(strings.TrimPrefix(t, "--node-options=")):
			out = append(out, t)
		default:
			return nil, fmt.Errorf("runtime argument %q: the study passes npx no option from the registry but -y and --node-options with memory limits", quoteArg(t))
		}
	}
	return out, nil
}

func nodeMemory(v string) bool {
	for _, f := range strings.Fields(v) {
		if !nodeMemoryOption.MatchString(f) {
			return false
		}
	}
	return v != ""
}

var pythonVersion = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`)

// uvxRuntime checks uvx runtime arguments: only the Python version
// (--python X, -p X, --python=X) passes.
func uvxRuntime(tokens []string) ([]string, error) {
	var out []string
	for i := 0; i < len(tokens); i++ {
		t := tokens[i]
		switch {
		case (t == "--python" || t == "-p") && i+1 < len(tokens) && pythonVersion.MatchString(tokens[i+1]):
			out = append(out, "--python", tokens[i+1])
			i++
		case strings.HasPrefix(t, "--python=") && pythonVersion.MatchString(strings.TrimPrefix(t, "--python=")):
			out = append(out, "--python", strings.TrimPrefix(t, "--python="))
		default:
			return nil, fmt.Errorf("runtime argument %q: the study passes uvx no option from the registry but --python VERSION", quoteArg(t))
		}
	}
	return out, nil
}

// dockerFlag is an option of docker run (and podman run): whether it
// takes a value, and whether it widens the container's reach into the
// host (for a value-dependent one, widens says which values do).
type dockerFlag struct {
	value  bool
	widens func(value string) bool
}

func always(string) bool { return true }
func never(string) bool  { return false }

// hostNamespace: --network host or container:X joins a namespace that is
// not the container's own.
func hostNamespace(v string) bool {
	return v == "host" || strings.HasPrefix(v, "container:") || strings.HasPrefix(v, "ns:")
}

// dockerFlags are the run options the import knows, by every name.
var dockerFlags = func() map[string]dockerFlag {
	m := map[string]dockerFlag{}
	add := func(f dockerFlag, names ...string) {
		for _, n := range names {
			m[n] = f
		}
	}
	safeBool, safeValue := dockerFlag{false, never}, dockerFlag{true, never}
	add(safeBool, "-i", "--interactive", "-t", "--tty", "--rm", "--init", "--read-only", "--no-healthcheck")
	add(safeValue, "-e", "--env", "-w", "--workdir", "-u", "--user", "--tmpfs", "--shm-size", "-m", "--memory",
		"--memory-swap", "--cpus", "--platform", "--pull", "--entrypoint", "-l", "--label", "--stop-timeout",
		"--stop-signal", "--ulimit", "--pids-limit", "--hostname", "-h", "--dns", "--add-host", "--log-driver", "--log-opt")
	wideBool, wideValue := dockerFlag{false, always}, dockerFlag{true, always}
	add(wideBool, "--privileged", "-P", "--publish-all")
	add(wideValue, "-v", "--volume", "--mount", "--volumes-from", "--cap-add", "--device", "--device-cgroup-rule",
		"--gpus", "--pid", "--ipc", "--uts", "--userns", "--cgroupns", "--security-opt", "--env-file", "-p", "--publish",
		"--sysctl", "--cgroup-parent", "--runtime", "--group-add")
	add(dockerFlag{true, hostNamespace}, "--network", "--net")
	return m
}()

// dockerRuntime sorts docker run runtime arguments into those passed and
// those that widen the container's reach (wide, passed only when keepWide);
// an option it does not know, or an operand, is an error.
func dockerRuntime(tokens []string, keepWide bool) (pass, wide []string, err error) {
	unknown := func(t string) error {
		return fmt.Errorf("runtime argument %q is not a docker run option the study passes", quoteArg(t))
	}
	for i := 0; i < len(tokens); i++ {
		t := tokens[i]
		var opts [][2]string // name, value ("" for a boolean)
		switch {
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t, "=")
			f, ok := dockerFlags[name]
			switch {
			case !ok:
				return nil, nil, unknown(t)
			case f.value && !hasVal:
				if i+1 >= len(tokens) {
					return nil, nil, fmt.Errorf("runtime argument %q wants a value", quoteArg(t))
				}
				i++
				val = tokens[i]
			case !f.value && hasVal && val != "true" && val != "false":
				return nil, nil, unknown(t)
			}
			opts = append(opts, [2]string{name, val})
		case strings.HasPrefix(t, "-") && len(t) > 1:
			// One or more bundled short options; one that takes a value
			// takes the rest of the token, or the next token.
			for j := 1; j < len(t); j++ {
				name := "-" + string(t[j])
				f, ok := dockerFlags[name]
				if !ok {
					return nil, nil, unknown(t)
				}
				if !f.value {
					opts = append(opts, [2]string{name, ""})
					continue
				}
				val := strings.TrimPrefix(t[j+1:], "=")
				if val == "" {
					if i+1 >= len(tokens) {
						return nil, nil, fmt.Errorf("runtime argument %q wants a value", quoteArg(t))
					}
					i++
					val = tokens[i]
				}
				opts = append(opts, [2]string{name, val})
				break
			}
		default:
			return nil, nil, unknown(t)
		}
		for _, o := range opts {
			f := dockerFlags[o[0]]
			tok := []string{o[0]}
			if f.value {
				tok = []string{o[0], o[1]}
			} else if o[1] == "false" {
				continue // an option turned off does nothing
			}
			if f.widens(o[1]) {
				wide = append(wide, tok...)
				if !keepWide {
					continue
				}
			}
			pass = append(pass, tok...)
		}
	}
	return pass, wide, nil
}

// quoteArg bounds registry text quoted in a reason.
func quoteArg(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
