# tools/batch.sh: sourced by scripts that compile several independent
# things (fuzz/run.sh, tools/cross.sh). A compile keeps one core busy, so
# on CI's two cores two at a time take half the time.
#
# in_batches RUN JOBS LOGDIR WORD...: runs `RUN WORD` (RUN empty: WORD is
# the command) for each WORD in the background, JOBS at a time, the output
# of each in LOGDIR/WORD.log, shown when its batch is done. Returns 1
# (after its batch) when one failed.
in_batches() {
    _run=$1 _jobs=$2 _logs=$3
    shift 3
    mkdir -p "$_logs"
    _pending="" _n=0 _failed=""
    for _word in "$@" ""; do
        if [ -n "$_word" ]; then
            # shellcheck disable=SC2086
            $_run "$_word" > "$_logs/$_word.log" 2>&1 &
            _pending="$_pending $_word:$!"
            _n=$((_n + 1))
            [ $_n -lt "$_jobs" ] && continue
        fi
        for _job in $_pending; do
            wait "${_job#*:}" || _failed="$_failed ${_job%%:*}"
            cat "$_logs/${_job%%:*}.log"
        done
        _pending="" _n=0
        if [ -n "$_failed" ]; then echo "failed:$_failed" >&2; return 1; fi
    done
}

# one job per core where nproc says how many
cores() { nproc 2> /dev/null || echo 1; }
