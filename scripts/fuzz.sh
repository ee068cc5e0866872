#!/usr/bin/env bash
# The fuzz stage of CI (docs/reliability.md#fuzzing): builds the libFuzzer targets of fuzz/ with clang in
# build-fuzz/ (ccache), replays the saved crash inputs of tests/fuzz/regressions/<target>/, then fuzzes each target
# (FUZZ_RUNS inputs each, default 3,000, seed FUZZ_SEED) from seeds taken from the repository's own inputs. A finding fails the stage and
# names the input to keep under tests/fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# CI fuzzes reproducibly: a fixed seed and a fixed number of inputs per target from the same seeds, so a clean
# checkout explores the same inputs on every machine (a red CI is a real, replayable finding, not luck);
# FUZZ_SECONDS only caps a slow machine. Exploring further: FUZZ_SEED=0 (random) FUZZ_RUNS=-1 FUZZ_SECONDS=600.
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-3000}
seed=${FUZZ_SEED:-1}
jobs=$(nproc)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
out=build-fuzz
# -O1 and line tables: what ASan reports need, for little compile time. No MPI, tests or benchmarks.
cmake -S . -B "$out" -G Ninja -DMONET_FUZZ=ON -DMONET_MPI=OFF -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" >/dev/null
cmake --build "$out" -j "$jobs" --target fuzz_toml fuzz_onnx fuzz_yaml

# Seeds: the repository's own inputs, per target.
seeds() {  # seeds <target> <files...>
  local dir=$out/seeds/$1; shift
  rm -rf "$dir"; mkdir -p "$dir"
  cp "$@" "$dir"/ 2>/dev/null || true
}
seeds fuzz_toml architectures/*.toml architectures/cores/*.toml workloads/*.toml experiments/*.toml
seeds fuzz_onnx tests/data/pytorch_ops/*.onnx workloads/onnx/m5_audio.onnx workloads/onnx/squeezenet1_1.onnx \
  workloads/onnx/gpt2_tiny_L2_T256.onnx
seeds fuzz_yaml tests/data/zigzag/inputs/*/*.yaml tests/data/stream/hardware/*.yaml tests/data/stream/hardware/cores/*.yaml \
  tests/data/stream/mapping/*.yaml

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
status=0
for target in fuzz_toml fuzz_onnx fuzz_yaml; do
  bin=$out/bin/$target
  regressions=tests/fuzz/regressions/$target
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $target: replaying $(ls "$regressions" | wc -l) saved input(s)"
    "$bin" "$regressions"/* >"$out/$target.replay.log" 2>&1 || { cat "$out/$target.replay.log"; status=1; }
  fi
  # The corpus of earlier runs (build-fuzz/corpus, kept like ccache) grows; the seeds are read each time.
  mkdir -p "$out/corpus/$target" "$out/crashes/$target"
  echo "== $target: fuzzing $runs inputs (seed $seed, at most ${seconds} s)"
  if ! "$bin" -seed="$seed" -runs="$runs" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
         -artifact_prefix="$out/crashes/$target/" "$out/corpus/$target" "$out/seeds/$target" \
         >"$out/$target.log" 2>&1; then
    tail -n 40 "$out/$target.log"
    echo "error: $target found an input that crashes monet or ends in something else than a located error:" \
         "$(ls "$out/crashes/$target"); fix it and keep the input in $regressions/" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$out/$target.log" | tr '\n' ' '; echo
done
exit $status
