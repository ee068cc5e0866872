#!/usr/bin/python3
"""Study 4 of docs/results.md, edge to data center: one training step of ResNet-18-CIFAR (batch 4, Adam), of
MONET's small GPT-2 (batch 1, T = 256, Adam) and of GPT-2 124M (batch 1, T = 1,024, Adam) on every architecture of experiments/monet/edge_to_datacenter/ — step
time, energy per step and per sample, peak memory, utilisation — as one markdown table and one SVG plot.

    /usr/bin/python3 scripts/studies/edge_to_datacenter.py [--monet PATH] [--out DIR] [--only NAME]...
        [--report-only] [--svg FILE]

Runs `monet run EXPERIMENT --out OUT/<arch>/<workload>` (GPT-2 with --set workload.file=...), then reads the
results.json files back (--report-only: only that) and prints the table; --svg writes the plot (default
docs/images/edge_to_datacenter.svg). Utilisation = MACs of the step / (step cycles x all PEs of the chip).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STUDY = os.path.join(ROOT, "experiments", "monet", "edge_to_datacenter")
# Order: edge to data center.
ORDER = ["mcu_ethos_u65", "edge_tpu_mesh", "tpu_like_quad_core", "hetero_mid_range", "tpu_v4", "gpu_a100"]
WORKLOADS = {  # name -> (--set values, samples per step)
    "resnet18_cifar": ([], 4),
    "gpt2_small": (["workload.file=\"%s\"" % os.path.join(ROOT, "workloads", "onnx", "gpt2_monet_small.onnx")], 1),
    # GPT-2 124M (12 layers, d = 768, T = 1,024, batch 1): where it does not fit, the row says why.
    "gpt2_124m": (["workload.file=\"%s\"" % os.path.join(ROOT, "workloads", "onnx", "gpt2_small.onnx")], 1),
}


def experiments(only):
    names = [os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(STUDY, "*.toml"))]
    names.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return [n for n in names if not only or n in only]


def run(monet, out, names):
    for name in names:
        for workload, (sets, _) in WORKLOADS.items():
            folder = os.path.join(out, name, workload)
            args = [monet, "run", os.path.join(STUDY, name + ".toml"), "--out", folder, "--log-level", "warn"]
            for s in sets:
                args += ["--set", s]
            start = time.monotonic()
            r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            status = "ok" if r.returncode == 0 else "FAILED (exit %d)" % r.returncode
            print("%-20s %-15s %s in %.1f s" % (name, workload, status, time.monotonic() - start), file=sys.stderr)
            if r.returncode != 0:
                print(r.stdout, file=sys.stderr)
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, "error.txt"), "w") as f:
                    f.write(r.stdout)


def row(name, workload, j):
    samples = WORKLOADS[workload][1]
    cores = j["architecture"]["cores"]
    pes = sum(c["pe_count"] for c in cores.values()) if isinstance(cores, dict) else sum(c["pe_count"] for c in cores)
    onchip = sum(c["peak_memory_bytes"] for c in (cores.values() if isinstance(cores, dict) else cores))
    macs = j["training"]["macs_total"]
    return {
        "architecture": name, "workload": workload, "feasible": j.get("feasible", True),
        "cycles": j["latency_cycles"], "seconds": j.get("latency_s"),
        "energy_j": j["energy_pj"] * 1e-12, "energy_per_sample_j": j["energy_pj"] * 1e-12 / samples,
        "peak_onchip_bytes": onchip, "peak_offchip_bytes": j["peak_offchip_bytes"],
        "utilisation": macs / (j["latency_cycles"] * pes), "macs": macs, "pes": pes,
    }


def collect(out, names):
    rows = []
    for name in names:
        for workload in WORKLOADS:
            path = os.path.join(out, name, workload, "results.json")
            error = os.path.join(out, name, workload, "error.txt")
            if os.path.exists(path):
                with open(path) as f:
                    rows.append(row(name, workload, json.load(f)))
            elif os.path.exists(error):
                with open(error) as f:
                    rows.append({"architecture": name, "workload": workload, "error": f.read().strip()})
    return rows


def si(x, unit):
    for factor, prefix in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]:
        if abs(x) >= factor:
            return "%.3g %s%s" % (x / factor, prefix, unit)
    return "%.3g %s" % (x, unit)


def table(rows):
    lines = ["| architecture | workload | step time | cycles | energy / step | energy / sample | peak on chip | "
             "peak off chip | utilisation |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            reason = r["error"].split("error: ", 1)[-1].split(";")[0]
            lines.append("| %s | %s | — | — | — | — | — | — | — (%s) |" % (r["architecture"], r["workload"], reason))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %.1f %% |%s" % (
            r["architecture"], r["workload"], si(r["seconds"], "s") if r["seconds"] else "—",
            format(int(r["cycles"]), ","), si(r["energy_j"], "J"), si(r["energy_per_sample_j"], "J"),
            si(r["peak_onchip_bytes"], "B"), si(r["peak_offchip_bytes"], "B"), 100 * r["utilisation"],
            "" if r["feasible"] else " infeasible"))
    return "\n".join(lines)


def svg(rows, path):
    """Energy per sample against step time, log-log, one marker per architecture and workload."""
    import math
    pts = [r for r in rows if r.get("seconds")]
    if not pts:
        return
    W, H, L, R, T, B = 720, 440, 80, 200, 30, 60
    xs = [math.log10(r["seconds"]) for r in pts]
    ys = [math.log10(r["energy_per_sample_j"]) for r in pts]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
    x1 = max(x1, x0 + 1)
    y1 = max(y1, y0 + 1)
    px = lambda v: L + (v - x0) / (x1 - x0) * (W - L - R)
    py = lambda v: H - B - (v - y0) / (y1 - y0) * (H - T - B)
    colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]
    names = [n for n in dict.fromkeys(r["architecture"] for r in pts)]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">One training step, edge to data center: energy per sample vs step time</text>' % L]
    for e in range(x0, x1 + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (px(e), T, px(e), H - B))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">1e%d</text>' % (px(e), H - B + 16, e))
    for e in range(y0, y1 + 1):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, py(e), W - R, py(e)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">1e%d</text>' % (L - 6, py(e) + 4, e))
    out.append('<text x="%d" y="%d" text-anchor="middle">step time (s)</text>' % ((L + W - R) / 2, H - 20))
    out.append('<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">energy per sample (J)</text>' % ((T + H - B) / 2))
    for r in pts:
        c = colours[names.index(r["architecture"]) % len(colours)]
        x, y = px(math.log10(r["seconds"])), py(math.log10(r["energy_per_sample_j"]))
        if r["workload"] == "resnet18_cifar":
            out.append('<circle cx="%.1f" cy="%.1f" r="6" fill="%s"><title>%s %s</title></circle>' % (x, y, c, r["architecture"], r["workload"]))
        else:
            out.append('<rect x="%.1f" y="%.1f" width="11" height="11" fill="%s"><title>%s %s</title></rect>' % (x - 5.5, y - 5.5, c, r["architecture"], r["workload"]))
    ly = T + 10
    for i, n in enumerate(names):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>' % (
            W - R + 14, ly, colours[i % len(colours)], W - R + 30, ly + 9, n))
        ly += 18
    out.append('<circle cx="%d" cy="%d" r="5" fill="#444"/><text x="%d" y="%d">ResNet-18-CIFAR (b 4)</text>' % (W - R + 19, ly + 14, W - R + 30, ly + 18))
    out.append('<rect x="%d" y="%d" width="10" height="10" fill="#444"/><text x="%d" y="%d">GPT-2 small (T 256)</text>' % (W - R + 14, ly + 28, W - R + 30, ly + 37))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--monet", default=os.path.join(ROOT, "build", "bin", "monet"))
    p.add_argument("--out", default=os.path.join(ROOT, "results", "edge_to_datacenter"))
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--svg", default=os.path.join(ROOT, "docs", "images", "edge_to_datacenter.svg"))
    a = p.parse_args()
    names = experiments(a.only)
    if not a.report_only:
        run(a.monet, a.out, names)
    rows = collect(a.out, names)
    print(table(rows))
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(rows) + "\n")
    with open(os.path.join(a.out, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if a.svg:
        svg(rows, a.svg)


if __name__ == "__main__":
    main()
