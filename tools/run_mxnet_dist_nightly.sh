#!/usr/bin/env bash
# Run MXNet 1.9.1's distributed kvstore test on sparsenet, as MXNet's CI runs it
# (ci/docker/runtime_functions.sh, integrationtest_ubuntu_cpu_dist_kvstore), with
# `sparsenet launch -n N` in place of MXNet's launcher and `import sparsenet as mx` in
# place of `import mxnet as mx`. Fetches nothing: give it MXNet's tests/nightly folder
# (it needs dist_sync_kvstore.py and test_kvstore.py; test_server_profiling.py is run
# when present). The files are copied to a temporary folder, only their import lines
# changed. Prints PASS/FAIL per invocation and exits 1 if any failed.
#
# usage: tools/run_mxnet_dist_nightly.sh MXNET_NIGHTLY_DIR [-n N] [--timeout S] [--only K]
#   -n N         workers per invocation (default 7, as MXNet's CI; the profiling one uses 3)
#   --timeout S  seconds one invocation may run before it is killed (default 900)
#   --only K     run only invocation K (1-9)
# environment: PYTHON (default: .venv/bin/python of this checkout, else python3)
set -u

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
SRC=$1; shift
N=7; LIMIT=900; ONLY=
while [ $# -gt 0 ]; do
  case $1 in
    -n) N=$2; shift 2 ;;
    --timeout) LIMIT=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for f in dist_sync_kvstore.py test_kvstore.py; do
  [ -f "$SRC/$f" ] || { echo "error: $SRC/$f not found (expected MXNet's tests/nightly)" >&2; exit 2; }
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mxnet-dist-nightly.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for f in dist_sync_kvstore.py test_kvstore.py test_server_profiling.py; do
  [ -f "$SRC/$f" ] || continue
  sed -e 's/^import mxnet as mx$/import sparsenet as mx/' \
      -e 's/^from mxnet\.test_utils import/from sparsenet.test_utils import/' \
      "$SRC/$f" > "$WORK/$f"
done

# the CI function's invocations, in its order: "workers|script arguments"
RUNS=(
  "$N|dist_sync_kvstore.py --type=gluon_step_cpu"
  "$N|dist_sync_kvstore.py --type=gluon_sparse_step_cpu"
  "$N|dist_sync_kvstore.py --type=invalid_cpu"
  "$N|dist_sync_kvstore.py --type=gluon_type_cpu"
  "$N|dist_sync_kvstore.py"
  "$N|dist_sync_kvstore.py --no-multiprecision"
  "$N|dist_sync_kvstore.py --type=compressed_cpu"
  "$N|dist_sync_kvstore.py --type=compressed_cpu --no-multiprecision"
  "3|test_server_profiling.py"
)

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0
failed=0; k=0
cd "$WORK" || exit 2
for run in "${RUNS[@]}"; do
  k=$((k + 1))
  [ -z "$ONLY" ] || [ "$ONLY" = "$k" ] || continue
  n=${run%%|*}; args=${run#*|}; script=${args%% *}
  if [ ! -f "$script" ]; then
    echo "SKIP  $k: $script not in $SRC"; continue
  fi
  log="$WORK/run$k.log"
  start=$(date +%s)
  # shellcheck disable=SC2086  # the arguments are split on purpose
  timeout --kill-after=10 "$LIMIT" "$PY" -m sparsenet.cli launch -n "$n" \
      --timeout "$(( LIMIT < 600 ? LIMIT : 600 ))" $args > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then
    echo "PASS  $k: -n $n $args (${secs}s)"
  else
    failed=$((failed + 1))
    why=$( [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "timed out" || echo "rc $rc")
    echo "FAIL  $k: -n $n $args ($why, ${secs}s); last lines:"
    grep -E "Error|error:|assert" "$log" | tail -3 | cut -c1-300 | sed 's/^/        /'
  fi
done
[ $failed -eq 0 ] || { echo "$failed invocation(s) failed"; exit 1; }
echo "all invocations passed"
