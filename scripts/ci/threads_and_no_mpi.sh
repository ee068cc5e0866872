#!/usr/bin/env bash
# CI stage (scripts/bootstrap.sh test): searches under ThreadSanitizer, and a monet built without MPI.
# Usage: scripts/ci/threads_and_no_mpi.sh BUILD_TSAN BUILD_NORMAL
#   BUILD_TSAN   a build with -DMONET_TSAN=ON -DMONET_MPI=OFF (bin/monet and the plugins)
#   BUILD_NORMAL the normal build, whose single-thread results are the reference
# Each search runs at 2 threads under TSan (a data race ends it with TSan's report and a non-zero exit) and must
# write byte for byte what the normal build writes at 1 thread. Under TSan the kernel's parallel loops run on
# std::threads instead of TBB's uninstrumented scheduler (framework/src/util/parallel.hpp); a race injected into
# DesignEvaluator::evaluate (a shared counter) fails this stage. The same binary, having no MPI, must run alone
# and refuse to run as N copies under mpirun, leaving no output folder.
set -euo pipefail
tsan=$1/bin/monet
normal=$2/bin/monet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"

searches=(
  # allocation genes: 256 points of the six-convolution problem, evaluated in parallel batches
  "tests/data/search/small_allocation.toml --set search.plugin=random --set search.budget=256"
  # hardware genes: new core configurations, mapping searches and the shared cost cache
  "experiments/search/edge_tpu_hw_sweep.toml --set search.plugin=random --set search.budget=6"
  # fusion genes with per-block tile counts: prepared variants (CN graphs) built concurrently
  "experiments/search/resnet18_training_fusion_search.toml --set search.plugin=random --set search.budget=4 --set space.genes.cut.tiles=[0,4]"
)
i=0
for s in "${searches[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the arguments are words
  "$normal" run $s --threads 1 --out "$work/ref$i" --log-level warn >"$work/ref$i.log" 2>&1 || { cat "$work/ref$i.log"; exit 1; }
  # shellcheck disable=SC2086
  if ! "$tsan" run $s --threads 2 --out "$work/tsan$i" --log-level warn >"$work/tsan$i.log" 2>&1; then
    echo "ThreadSanitizer run failed: monet run $s --threads 2"; cat "$work/tsan$i.log"; exit 1
  fi
  for f in evaluations.csv pareto.csv best/results.json; do
    if ! cmp -s "$work/ref$i/$f" "$work/tsan$i/$f"; then
      echo "monet run $s: $f differs between 1 thread (normal build) and 2 threads (TSan build)"
      diff <(head -c 4000 "$work/ref$i/$f") <(head -c 4000 "$work/tsan$i/$f") | head -20; exit 1
    fi
  done
  echo "tsan: monet run $s: identical at 1 and 2 threads, no race reported"
done

echo "no MPI: one process works (above); under mpirun with 2 ranks it refuses"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if mpirun -np 2 --oversubscribe "$tsan" run tests/data/search/small_allocation.toml --out "$work/np2" >"$work/np2.log" 2>&1; then
  echo "a monet built without MPI ran under mpirun -np 2"; cat "$work/np2.log"; exit 1
fi
grep -q "built without MPI" "$work/np2.log" || { echo "no 'built without MPI' message:"; cat "$work/np2.log"; exit 1; }
[[ ! -e $work/np2 ]] || { echo "output folder written by a refused run"; exit 1; }
echo "no MPI: refused under mpirun -np 2 with: $(grep -m1 'built without MPI' "$work/np2.log")"
