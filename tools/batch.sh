# tools/batch.sh: sourced by scripts that compile several independent
# things (fuzz/run.sh, tools/cross.sh). A compile keeps one core busy, so
# on CI's two cores two at a time take half the time.
#
# in_batches RUN JOBS LOGDIR WORD...: runs `RUN WORD` (RUN empty: WORD is
# the command) for each WORD in the background, JOBS at a time: the next
# one starts as soon as one ends, not when a whole group has (compiles of
# 5 and 50 seconds side by side would leave a core idle). The output of
# each goes to LOGDIR/WORD.log, shown when it ends. After a failure no
# more start; returns 1 once those running have ended.
in_batches() {
    _run=$1 _jobs=$2 _logs=$3
    shift 3
    mkdir -p "$_logs"
    _running="" _n=0 _failed=""
    for _word in "$@"; do
        [ -z "$_failed" ] || break
        rm -f "$_logs/$_word.rc"
        # the exit status lands in WORD.rc once the output is complete (a
        # trap: under set -e a failure ends the job's shell there)
        # shellcheck disable=SC2086
        ( trap 'echo $? > "$_logs/$_word.rc"' EXIT; $_run "$_word" > "$_logs/$_word.log" 2>&1 ) &
        _running="$_running $_word" _n=$((_n + 1))
        while [ "$_n" -ge "$_jobs" ]; do _batch_reap || sleep 1; done
    done
    while [ "$_n" -gt 0 ]; do _batch_reap || sleep 1; done
    wait
    if [ -n "$_failed" ]; then echo "failed:$_failed" >&2; return 1; fi
}

# shows and forgets the jobs that have ended; 1 when none had
_batch_reap() {
    _still="" _ended=1
    for _w in $_running; do
        if [ -f "$_logs/$_w.rc" ]; then
            cat "$_logs/$_w.log"
            [ "$(cat "$_logs/$_w.rc")" = 0 ] || _failed="$_failed $_w"
            _n=$((_n - 1)) _ended=0
        else
            _still="$_still $_w"
        fi
    done
    _running=$_still
    return $_ended
}

# one job per core where nproc says how many
cores() { nproc 2> /dev/null || echo 1; }
