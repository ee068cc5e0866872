#!/usr/bin/python3
"""A quality command for monet's `command` plugin (docs/plugins.md#quality-command): NAS-Bench-201's CIFAR-10 test
accuracy of the cell a design point builds.

stdin:  {"genes": {...}, "keys": {"workload.set.ops": ["nor_conv_3x3", ...]}}   (the six edges, 1<-0 ... 3<-2)
stdout: {"accuracy": 94.37, "error": 5.63}                                       (percent)

The accuracies are the benchmark's (workloads/nasbench201/accuracy_cifar10.csv, 15,625 cells, cited in
workloads/nasbench201/README.md). A script that trains or evaluates the candidate keeps this shape: read the point,
print one JSON object on stdout, write any message on stderr, exit non-zero when the point cannot be assessed.
"""
import csv
import json
import pathlib
import sys

EDGES = ["edge_1_0", "edge_2_0", "edge_2_1", "edge_3_0", "edge_3_1", "edge_3_2"]
TABLE = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "nasbench201" / "accuracy_cifar10.csv"


def main() -> int:
    point = json.load(sys.stdin)
    ops = point["keys"].get("workload.set.ops")
    if not isinstance(ops, list) or len(ops) != len(EDGES):
        print(f"expected keys = [\"workload.set.ops\"] with six edge ops, got {ops!r}", file=sys.stderr)
        return 1
    with TABLE.open(newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if [row[e] for e in EDGES] == ops:
                accuracy = float(row["cifar10_test_accuracy_percent"])
                json.dump({"accuracy": accuracy, "error": 100.0 - accuracy}, sys.stdout)
                return 0
    print(f"no NAS-Bench-201 cell has the edges {ops}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
