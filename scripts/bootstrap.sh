#!/usr/bin/env bash
# One entry point for a fresh Debian machine (run as root, or with sudo available):
#   scripts/bootstrap.sh run    install missing Debian packages, build the CLI and the plugins, run
#                               experiments/quickstart.toml (a ResNet-18 training step on a multi-core accelerator)
#   scripts/bootstrap.sh test   install missing Debian packages, build, run the whole test suite
#                               (normal build, fuzz stage: scripts/fuzz.sh, then AddressSanitizer +
#                               UndefinedBehaviorSanitizer build)
# Idempotent: installs only what is missing, rebuilds only what changed. Builds use every core.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:-}
case "$mode" in
  run|test) ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++ pkg-config git ccache
  libboost-dev libtomlplusplus-dev libspdlog-dev libfmt-dev libtbb-dev
  libcli11-dev nlohmann-json3-dev libprotobuf-dev protobuf-compiler libonnx-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
  librsvg2-bin
  chromium python3          # the report.html browser test (tests/browser/)
  libopenmpi-dev openmpi-bin  # distributed searches under mpirun (docs/distributed.md)
  clang libclang-rt-dev       # libFuzzer targets (fuzz/, scripts/fuzz.sh, docs/reliability.md#fuzzing)
  coinor-libcbc-dev           # the checkpointing MILP's solver (docs/training.md#the-milp)
  pybind11-dev python3-dev    # the Python package monet (docs/python.md)
)
# What the test suite adds: the Python package's tests and tables (tests/python/), its examples (examples/python/).
if [[ $mode == test ]]; then
  packages+=(python3-pytest python3-pandas python3-optuna python3-matplotlib python3-nbconvert jupyter-nbconvert
             python3-ipykernel)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing missing Debian packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    echo "error: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc)
# ccache (CMakeLists.txt uses it when present) keys on paths relative to the build folder, not on the folder itself,
# so a fresh clone elsewhere (as CI makes) reuses what earlier builds of the same sources compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
build() {  # build <dir> [cmake options...]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

if [[ $mode == run ]]; then
  # A first run needs the CLI, the kernel and the plugins only: no tests, no benchmarks (a third of the targets).
  build build -DMONET_BUILD_TESTS=OFF -DMONET_BUILD_BENCH=OFF
  exec ./build/bin/monet run experiments/quickstart.toml
fi
# Each stage says what it cost (docs/reliability.md#what-ci-costs lists them).
stage_start=$SECONDS
stage() {  # stage <title>: ends the previous stage with its time, announces the next
  echo "== $(( SECONDS - stage_start )) s" >&2
  stage_start=$SECONDS
  echo "== $1 =="
}
echo "== build: kernel, plugins, CLI, tests, benchmarks =="
build build -DMONET_BUILD_TESTS=ON -DMONET_BUILD_BENCH=ON
stage "the test suite"
ctest --test-dir build -j "$jobs" --output-on-failure
stage "ThreadSanitizer: parallel searches; and monet built without MPI"
build build-tsan -DMONET_TSAN=ON -DMONET_MPI=OFF -DMONET_BUILD_TESTS=OFF -DMONET_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 -DNDEBUG"
./scripts/ci/threads_and_no_mpi.sh build-tsan build
stage "fuzzing: libFuzzer targets, saved inputs replayed, then ${FUZZ_RUNS:-3000} inputs each"
./scripts/fuzz.sh
stage "sanitizers: AddressSanitizer + UndefinedBehaviorSanitizer"
# -O1 and line tables only: what sanitizer reports need (file:line stacks) for less compile time than -O2 -g.
build build-asan -DMONET_SANITIZE=ON -DMONET_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 -DNDEBUG"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j "$jobs" --output-on-failure
echo "== $(( SECONDS - stage_start )) s (all: ${SECONDS} s)" >&2
