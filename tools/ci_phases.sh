# ci_phases.sh: sourced by .ci/run and the tools/run_*.sh scripts. Times each phase of CI
# and counts the AOTI compiles it made, so that every CI log ends with one table of where
# the time and the compiles went.
#
#   phase NAME CMD [ARGS...]   runs CMD, then prints "[ci] NAME: S s, C AOTI compiles, exit R"
#                              and appends the row to $AOTI_CI_PHASES (when set); returns R.
#   phase_table                prints the rows of $AOTI_CI_PHASES as a Markdown table.
#
# AOTI compiles are counted from the compile ledger ($AOTI_COMPILE_LEDGER): every AOTI
# compile (a packaging action, a reducer's compile server, a repro.py) appends one line to it
# (tools/aoti_package/compile.py, note_in_ledger). bazel_cmd passes the ledger's path to
# actions and tests; it is one fixed path per user, so that passing it changes no cache key
# from one run to the next. A phase's compiles are the lines added while it ran: phases that
# run beside each other (phase_beside) are counted together with the ones they overlap.
export AOTI_COMPILE_LEDGER="${AOTI_COMPILE_LEDGER:-/tmp/aoti_harness-$(id -u)/compile_ledger.log}"
mkdir -p "$(dirname "$AOTI_COMPILE_LEDGER")"
touch "$AOTI_COMPILE_LEDGER"

ledger_lines() { wc -l <"$AOTI_COMPILE_LEDGER" 2>/dev/null || echo 0; }

phase() {
  local name="$1"
  shift
  local start compiles0 rc=0
  start=$(date +%s)
  compiles0=$(ledger_lines)
  echo "[ci] >> $name"
  "$@" || rc=$?
  local secs=$(( $(date +%s) - start )) compiles=$(( $(ledger_lines) - compiles0 ))
  echo "[ci] << $name: ${secs} s, ${compiles} AOTI compiles, exit $rc"
  if [ -n "${AOTI_CI_PHASES:-}" ]; then
    printf '%s\t%s\t%s\t%s\n' "$name" "$secs" "$compiles" "$rc" >>"$AOTI_CI_PHASES"
  fi
  return "$rc"
}

# phase_beside WHAT CMD [ARGS...]: runs CMD (which times its own phases, named "... (beside)")
# in the background, beside the phases that follow: for work that fills the core they leave
# idle and uses a Bazel server of its own. Its output is held in a log; phase_wait collects it.
phase_beside() {
  local what="$1"
  shift
  local log
  log="$(mktemp "${TMPDIR:-/tmp}/aoti_ci_beside.XXXXXX")"
  echo "[ci] >> $what, beside the phases that follow (its log, printed when it ends: $log)"
  ("$@" >"$log" 2>&1) &
  PHASE_BESIDE_PID=$!
  PHASE_BESIDE_LOG="$log"
}

# phase_wait: waits for the phase_beside job, prints its log, returns its exit status.
phase_wait() {
  local rc=0
  wait "$PHASE_BESIDE_PID" || rc=$?
  PHASE_BESIDE_PID=
  cat "$PHASE_BESIDE_LOG"
  rm -f "$PHASE_BESIDE_LOG"
  return "$rc"
}

phase_table() {
  [ -n "${AOTI_CI_PHASES:-}" ] && [ -f "$AOTI_CI_PHASES" ] || return 0
  echo "| phase | wall (s) | AOTI compiles | exit |"
  echo "| --- | ---: | ---: | ---: |"
  awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4; s += $2; c += $3 }
              END { printf "| sum of phases (a phase beside others overlaps them) | %d | %d | |\n", s, c }' "$AOTI_CI_PHASES"
}
