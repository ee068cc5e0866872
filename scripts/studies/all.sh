#!/usr/bin/env bash
# Regenerates every study of docs/results.md: its tables (printed, one file per study in OUT) and its figures
# (docs/images/, drawn by monet or by the study's script). Usage: scripts/studies/all.sh [OUT] (default results/studies)
# Run time on this 2-core machine: about 10 minutes (study 1's two grids, 348 s, dominate; docs/results.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:-results/studies}
mkdir -p "$out"
py=/usr/bin/python3
$py scripts/studies/train_vs_infer_sweep.py --out "$out/1" --svg docs/images/train_vs_infer_sweep.svg | tee "$out/study1.md"
$py scripts/studies/fusion_for_training.py --out "$out/2" --svg-dir docs/images | tee "$out/study2.md"
$py scripts/studies/checkpointing_tradeoffs.py --out "$out/3" --svg-dir docs/images \
    --workloads resnet18_cifar,gpt2_monet_small --arches edge_tpu,quad_core,mcu | tee "$out/study3.md"
$py scripts/studies/edge_to_datacenter.py --out "$out/4" --svg docs/images/edge_to_datacenter.svg | tee "$out/study4.md"
$py scripts/studies/cosearch_nb201.py --out "$out/5" --svg docs/images/cosearch_nb201.svg | tee "$out/study5.md"
$py scripts/studies/cosearch_training.py --out "$out/6" | tee "$out/study6.md"
