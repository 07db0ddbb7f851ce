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

# cpu_ticks: "busy total" jiffies of every core since boot (/proc/stat's first line; iowait
# counts as idle). Two readings give how many cores a phase kept busy on average: a phase
# that leaves a core idle is one to run beside another.
cpu_ticks() {
  awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat 2>/dev/null || echo "0 0"
}

# cores_busy BUSY0 TOTAL0: the cores kept busy since that reading, as "1.7 of 2".
cores_busy() {
  local b1 t1 n
  read -r b1 t1 <<<"$(cpu_ticks)"
  n=$(nproc 2>/dev/null || echo 1)
  awk -v b="$((b1 - $1))" -v t="$((t1 - $2))" -v n="$n" 'BEGIN { printf "%.1f of %d", (t > 0 ? n * b / t : 0), n }'
}

phase() {
  local name="$1"
  shift
  local start compiles0 busy0 total0 rc=0
  start=$(date +%s)
  compiles0=$(ledger_lines)
  read -r busy0 total0 <<<"$(cpu_ticks)"
  echo "[ci] >> $name"
  "$@" || rc=$?
  local secs=$(( $(date +%s) - start )) compiles=$(( $(ledger_lines) - compiles0 )) busy
  busy="$(cores_busy "$busy0" "$total0")"
  echo "[ci] << $name: ${secs} s, ${compiles} AOTI compiles, cores busy ${busy}, exit $rc"
  if [ -n "${AOTI_CI_PHASES:-}" ]; then
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$secs" "$compiles" "$busy" "$rc" >>"$AOTI_CI_PHASES"
  fi
  return "$rc"
}

# phase_beside WHAT CMD [ARGS...]: runs CMD (which times its own phases, named "... (beside)")
# in the background, beside the phases that follow: for work that fills the core they leave
# idle and uses a Bazel server of its own. Several may run at once. Its output is held in a
# log; phase_wait collects them all.
PHASE_BESIDE_PIDS=()
PHASE_BESIDE_LOGS=()
phase_beside() {
  local what="$1"
  shift
  local log
  log="$(mktemp "${TMPDIR:-/tmp}/aoti_ci_beside.XXXXXX")"
  echo "[ci] >> $what, beside the phases that follow (its log, printed when it ends: $log)"
  ("$@" >"$log" 2>&1) &
  PHASE_BESIDE_PIDS+=("$!")
  PHASE_BESIDE_LOGS+=("$log")
}

# phase_kill_beside: stops the phase_beside jobs still running (a run that stops early).
phase_kill_beside() {
  local pid
  for pid in "${PHASE_BESIDE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
}

# phase_wait: waits for every phase_beside job, prints their logs in the order they started,
# returns the first non-zero exit status among them (0 when all passed).
phase_wait() {
  local rc=0 r i
  for i in "${!PHASE_BESIDE_PIDS[@]}"; do
    r=0
    wait "${PHASE_BESIDE_PIDS[$i]}" || r=$?
    cat "${PHASE_BESIDE_LOGS[$i]}"
    rm -f "${PHASE_BESIDE_LOGS[$i]}"
    [ "$rc" -ne 0 ] || rc=$r
  done
  PHASE_BESIDE_PIDS=()
  PHASE_BESIDE_LOGS=()
  return "$rc"
}

phase_table() {
  [ -n "${AOTI_CI_PHASES:-}" ] && [ -f "$AOTI_CI_PHASES" ] || return 0
  echo "| phase | wall (s) | AOTI compiles | cores busy (the machine's, all work) | exit |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5; s += $2; c += $3 }
              END { printf "| sum of phases (a phase beside others overlaps them) | %d | %d | | |\n", s, c }' "$AOTI_CI_PHASES"
}
