package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionCommand is the `mcpdrill completion` command; run (nil:
// runCompletion) prints the script of the parsed shell.
func completionCommand(run func(context.Context, *completionOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		ArgsUsage: "bash|zsh|fish",
		Usage:     "print a shell completion script for bash, zsh or fish",
		Description: "Completes commands, subcommands and flags. Load it in the shell's start-up file:\n" +
			"  bash: source <(mcpdrill completion bash)   (in ~/.bashrc)\n" +
			"  zsh:  source <(mcpdrill completion zsh)    (in ~/.zshrc, after compinit)\n" +
			"  fish: mcpdrill completion fish > ~/.config/fish/completions/mcpdrill.fish\n" +
			"bash and zsh ask mcpdrill for the candidates each time; fish's script lists them, so write it again\n" +
			"after an upgrade.",
		Action: action(parseCompletionOptions, run, runCompletion),
	}
}

// completionOptions is what one `mcpdrill completion` asks for: the shell.
type completionOptions struct {
	env
	shell string
	// app is the CLI whose commands and flags the script completes.
	app *cli.App
}

// parseCompletionOptions checks that one known shell is named.
func parseCompletionOptions(c *cmdLine) (*completionOptions, error) {
	if c.NArg() != 1 {
		return nil, usageErr("completion: name one shell: bash, zsh or fish")
	}
	switch shell := c.Args().First(); shell {
	case "bash", "zsh", "fish":
		return &completionOptions{shell: shell, app: c.cli.App}, nil
	default:
		return nil, usageErr("completion: unknown shell %q (want bash, zsh or fish)", shell)
	}
}

// runCompletion prints the shell's completion script.
func runCompletion(ctx context.Context, o *completionOptions) error {
	script, err := completionScript(o.app, o.shell)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(o.stdout, script)
	return err
}

// completionScript returns the completion script of app for shell. The
// bash and zsh scripts follow urfave/cli's autocomplete scripts (MIT): they
// run the command line typed so far with --generate-bash-completion.
func completionScript(app *cli.App, shell string) (string, error) {
	switch shell {
	case "bash":
		return strings.ReplaceAll(bashCompletion, "PROG", app.Name), nil
	case "zsh":
		return strings.ReplaceAll(zshCompletion, "PROG", app.Name), nil
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return "", exitErr(exitInternal, fmt.Errorf("fish completion: %w", err))
		}
		return s, nil
	}
	return "", usageErr("completion: unknown shell %q (want bash, zsh or fish)", shell)
}

const bashCompletion = `# bash completion for PROG: source <(PROG completion bash)
_PROG_complete() {
  local cur words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n "=:" || return
  else
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi
  local request=("${words[@]:0:$cword}")
  [[ "$cur" == -* ]] && request+=("$cur")
  local opts
  opts=$("${request[@]}" --generate-bash-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
}
complete -o bashdefault -o default -F _PROG_complete PROG
`

const zshCompletion = `#compdef PROG
# zsh completion for PROG: source <(PROG completion zsh), after compinit
_PROG_complete() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _PROG_complete PROG
`
