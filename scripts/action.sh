#!/usr/bin/env bash
# The shell steps of the mcpdrill GitHub Action (action.yml in the repository's root), one
# subcommand a step, so that the tests run what the action runs (cmd/mcpdrill TestActionScript):
#
#   action.sh install  builds mcpdrill from the action's own checkout (go install ./cmd/mcpdrill,
#                      the version stamped with the action's ref) into a directory of its own, and
#                      adds that directory to GITHUB_PATH for the steps that follow
#   action.sh run      runs `mcpdrill COMMAND --format sarif --fail-on FAIL_ON [--sarif-category
#                      CATEGORY] ARGS...` with stdout to the SARIF file, and records mcpdrill's exit code as the step output
#                      exit-code. It exits 0 when mcpdrill ran to a verdict (0 clean, 1 findings at
#                      or above fail-on, 3 server unreachable or revision refused), so that the
#                      upload step still runs, and with mcpdrill's code otherwise (2 usage error,
#                      4 internal error), when there is no report to upload
#   action.sh finish   exits with the code run recorded, after saying why on an error annotation
#
# Everything comes from the environment; action.yml maps the inputs into it and never writes an
# input into the script text. An input holding a line break or another control character is refused
# (a line break in sarif-file would write a second line to GITHUB_OUTPUT, one in any input a second
# log line the runner obeys); input text shown in a workflow command is escaped as the runner reads
# it back (%, CR, LF), and "##[" (a command anywhere in a log line) is broken wherever input text is
# printed:
#   INPUT_COMMAND     scan, drift or "drift check" (default drift)
#   INPUT_ARGS        the arguments after the command, split into words as xargs splits them:
#                     white space separates, quotes ('…', "…") and backslashes group, nothing is
#                     expanded. --format, --json, --fail-on and --sarif-category belong to the action
#                     (before "--")
#   INPUT_SARIF_FILE  where the SARIF goes (default mcpdrill.sarif)
#   INPUT_FAIL_ON     error, warn, info or never (default error)
#   INPUT_CATEGORY    the code scanning category, written into the SARIF's automationDetails.id
#                     (the upload step applies its own only to a SARIF run without one); empty:
#                     none, and code scanning names the run by workflow, job and matrix
#   ACTION_PATH       install: the action's checkout (a clone of this repository)
#   ACTION_REF        install: the version to stamp (the action's ref); empty: from the build info
#   EXIT_CODE         finish: the exit-code output of run
#   GITHUB_OUTPUT, GITHUB_PATH, RUNNER_TEMP  as the Actions runner sets them
set -euo pipefail

out=${GITHUB_OUTPUT:-/dev/null}

# shown prints $1 for a log line: "##[" broken, so that no part of it is a workflow command.
shown() {
  printf '%s' "${1//'##['/#%23[}"
}

# fail prints an error annotation and exits with status $1; the message is escaped as the runner
# reads a workflow command's data back (%, CR, LF).
fail() {
  local code=$1
  shift
  local msg
  msg=$(shown "$*")
  msg=${msg//'%'/%25}
  msg=${msg//$'\r'/%0D}
  msg=${msg//$'\n'/%0A}
  echo "::error title=mcpdrill::$msg"
  exit "$code"
}

# refuse_controls fails when input $1 (its value $2) holds a line break or another control
# character; $3, when set, is a character it may hold (args: a tab separates words).
refuse_controls() {
  local LC_ALL=C value=$2
  if [[ -n ${3:-} ]]; then
    value=${value//"$3"/}
  fi
  if [[ $value == *[[:cntrl:]]* ]]; then
    fail 2 "$1: a line break or another control character is not allowed in this input"
  fi
}

# own_flag prints the name of the action's own flag that $1 spells, in any form the CLI accepts
# (one dash or more, with or without "=VALUE"), or nothing.
own_flag() {
  local name=$1
  [[ $name == -* ]] || return 0
  while [[ $name == -* ]]; do
    name=${name#-}
  done
  name=${name%%=*}
  case $name in
    format | json | fail-on | sarif-category) printf '%s' "$name" ;;
  esac
}

install_mcpdrill() {
  : "${ACTION_PATH:?ACTION_PATH must name the checkout of the action}"
  local bin="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcpdrill-action/bin"
  mkdir -p "$bin"
  local ldflags=""
  # A ref is a tag, a branch or a commit; anything else is not stamped.
  if [[ ${ACTION_REF:-} =~ ^[A-Za-z0-9._/+-]+$ ]]; then
    ldflags="-X main.version=$ACTION_REF"
  fi
  (cd "$ACTION_PATH" && GOBIN="$bin" go install -ldflags "$ldflags" ./cmd/mcpdrill)
  echo "$bin" >> "${GITHUB_PATH:-/dev/null}"
  echo "path=$bin/mcpdrill" >> "$out"
  "$bin/mcpdrill" version
}

run_mcpdrill() {
  refuse_controls command "${INPUT_COMMAND:-}"
  refuse_controls args "${INPUT_ARGS:-}" $'\t'
  refuse_controls sarif-file "${INPUT_SARIF_FILE:-}"
  refuse_controls fail-on "${INPUT_FAIL_ON:-}"
  refuse_controls category "${INPUT_CATEGORY:-}"
  local -a cmd
  case ${INPUT_COMMAND:-drift} in
    scan) cmd=(scan) ;;
    drift) cmd=(drift) ;;
    "drift check") cmd=(drift check) ;;
    *) fail 2 "command: want scan, drift or drift check, got \"${INPUT_COMMAND}\"" ;;
  esac
  local fail_on=${INPUT_FAIL_ON:-error}
  case $fail_on in
    error | warn | info | never) ;;
    *) fail 2 "fail-on: want error, warn, info or never, got \"$fail_on\"" ;;
  esac
  local sarif=${INPUT_SARIF_FILE:-mcpdrill.sarif}

  local -a args=()
  if [[ -n ${INPUT_ARGS:-} ]]; then
    local words
    words=$(mktemp)
    if ! printf '%s' "$INPUT_ARGS" | xargs printf '%s\0' > "$words"; then
      rm -f "$words"
      fail 2 "args: cannot split into words (an unmatched quote?)"
    fi
    local a
    while IFS= read -r -d '' a; do
      args+=("$a")
    done < "$words"
    rm -f "$words"
  fi
  # The action's own flags, before a server command's "--", in every spelling the CLI accepts:
  # -format, --format, --format=x, -fail-on=x, --json=false…
  # ${args[@]+…}: bash 3.2 (macOS) calls an empty array unbound under set -u.
  local own
  for a in ${args[@]+"${args[@]}"}; do
    [[ $a == -- ]] && break
    own=$(own_flag "$a")
    if [[ -n $own ]]; then
      fail 2 "args: $a is the action's to set (--$own: the output is SARIF; use the fail-on and category inputs)"
    fi
  done

  local -a own=(--format sarif --fail-on "$fail_on")
  if [[ -n ${INPUT_CATEGORY:-} ]]; then
    own+=(--sarif-category "$INPUT_CATEGORY")
  fi

  mkdir -p "$(dirname "$sarif")"
  # The arguments are not echoed: they may carry a header value.
  echo "mcpdrill ${cmd[*]} $(shown "${own[*]}") ... > $(shown "$sarif")"
  local code=0
  mcpdrill "${cmd[@]}" "${own[@]}" ${args[@]+"${args[@]}"} > "$sarif" || code=$?
  {
    echo "exit-code=$code"
    echo "sarif-file=$sarif"
  } >> "$out"
  case $code in
    0 | 1 | 3)
      if [[ -s $sarif ]]; then
        echo "sarif-written=true" >> "$out"
      else
        echo "sarif-written=false" >> "$out"
      fi
      ;;
    2) fail 2 "mcpdrill ${cmd[*]} exited 2 (usage error): no report to upload" ;;
    *) fail "$code" "mcpdrill ${cmd[*]} exited $code (internal error): no report to upload" ;;
  esac
}

finish() {
  refuse_controls sarif-file "${INPUT_SARIF_FILE:-}"
  refuse_controls fail-on "${INPUT_FAIL_ON:-}"
  local code=${EXIT_CODE:-}
  case $code in
    0) exit 0 ;;
    1) fail 1 "findings at or above ${INPUT_FAIL_ON:-error}: see the code scanning alerts, or ${INPUT_SARIF_FILE:-mcpdrill.sarif}" ;;
    3) fail 3 "the server was unreachable or refused the protocol revision: see the log above" ;;
    "") fail 4 "mcpdrill did not run" ;;
    *) exit "$code" ;;
  esac
}

case ${1:-} in
  install) install_mcpdrill ;;
  run) run_mcpdrill ;;
  finish) finish ;;
  *)
    echo "usage: $0 install|run|finish" >&2
    exit 2
    ;;
esac
