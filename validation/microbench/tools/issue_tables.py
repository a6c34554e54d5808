#!/usr/bin/env python3
"""The tables of the microbenchmark README's section on instruction issue (group `issue`), from a result file.

Usage: validation/microbench/tools/issue_tables.py [validation/results/h100/issue.json]

Prints three markdown tables: the streams alone (IPC by warps per SM), the streams beside a warpgroup's wgmmas
(with the wgmmas' rate while the ALU warps run: where the ALU warps end first, the wgmmas done after them at the
alone rate are taken out of the span), and the ALU bursts (gap, duty, IPC in bursts, the wgmmas' loss / duty).
"""
import json
import sys

WGMMAS = 12 * 64        # the beside-wgmma cases: 12 batches of 64
ALU_INSTR = 1024 * 128  # instructions per ALU warp in those cases


def main(path):
    m = {x["name"]: x for x in json.load(open(path))["measurements"]}
    med = lambda n: m[n]["median"]
    par = lambda n, k: m[n]["params"][k]

    labels = [("ffma", 1, "FFMA, 1 chain (latency)"), ("ffma", 2, "FFMA, 2 chains"), ("ffma", 3, "FFMA, 3 chains"),
              ("ffma", 4, "FFMA, 4 chains"), ("ffma", 8, "FFMA, 8 chains (5-7 alike)"), ("fadd", 8, "FADD, 8 chains"),
              ("mufu_ex2", 1, "MUFU.EX2, 1 chain"), ("mufu_ex2", 8, "MUFU.EX2, 8 chains")]
    print("| stream | 1 warp | 4 warps (1 per sub-partition) | 8 warps (2 per) | 16 warps (4 per) | 32 warps (8 per) |")
    print("|---|---:|---:|---:|---:|---:|")
    for k, c, label in labels:
        print(f"| {label} | " + " | ".join(f"{med(f'issue_{k}_c{c}_w{w}'):.3f}" for w in (1, 4, 8, 16, 32)) + " |")

    alone = med("issue_beside_wgmma_alone_cycles_per_wgmma")

    def rate(n):
        cyc, span = med(n), ALU_INSTR / par(n, "alu_warp_ipc_median")
        if span >= cyc * WGMMAS:
            return alone / cyc
        after = (cyc * WGMMAS - span) / alone
        return max(0.0, WGMMAS - after) * alone / span

    def cell(vals, f):
        out = [f(v) for v in vals]
        return out[0] if len(set(out)) == 1 else " / ".join(out)

    def spread(vals, f):
        lo, hi = f(min(vals)), f(max(vals))
        return lo if lo == hi else f"{lo}-{hi}"

    b = "issue_beside_wgmma_"
    print()
    print("| beside the wgmmas | cycles per wgmma (span) | ALU IPC per warp | wgmma rate while the ALU warps run |")
    print("|---|---:|---:|---:|")
    for w, label in ((4, "4 warps (1 per sub-partition)"), (8, "8 warps (2 per sub-partition)")):
        names = [f"{b}ffma_c{c}_w{w}_cycles_per_wgmma" for c in (1, 2, 3)]
        print(f"| {label}, FFMA, 1 / 2 / 3 chains | {cell([med(n) for n in names], lambda v: f'{v:.1f}')} | "
              f"{cell([par(n, 'alu_warp_ipc_median') for n in names], lambda v: f'{v:.3f}')} | "
              f"{cell([rate(n) for n in names], lambda v: f'{v:.2f}')} |")
    for names, label, last in (
            ([f"{b}ffma_c{c}_w4_cycles_per_wgmma" for c in (4, 5, 6, 7)] +
             [f"{b}{k}_cycles_per_wgmma" for k in ("ffma_w1", "ffma_w2", "ffma_w4", "fadd_w4")],
             "1, 2 or 4 warps, FFMA 4-8 chains or FADD 8 chains", None),
            ([f"{b}ffma_c{c}_w8_cycles_per_wgmma" for c in (4, 5, 6, 7)] +
             [f"{b}{k}_cycles_per_wgmma" for k in ("ffma_w8", "fadd_w8")],
             "8 warps, FFMA 4-8 chains or FADD 8 chains", "at most 0.01")):
        r = last or spread([rate(n) for n in names], lambda v: f"{v:.2f}")
        print(f"| {label} | {spread([med(n) for n in names], lambda v: f'{v:.1f}')} | "
              f"{spread([par(n, 'alu_warp_ipc_median') for n in names], lambda v: f'{v:.3f}')} | {r} |")
    names = [f"{b}mufu_ex2_w4_cycles_per_wgmma", f"{b}mufu_ex2_w8_cycles_per_wgmma"]
    print(f"| 4 / 8 warps of MUFU.EX2, 8 chains | {cell([med(n) for n in names], lambda v: f'{v:.1f}')} | "
          f"{' / '.join(format(par(n, 'alu_warp_ipc_median'), '.3f') for n in names)} | "
          f"{cell([rate(n) for n in names], lambda v: f'{v:.2f}')} |")

    d = "issue_duty_n256_"
    base = med(d + "alone_cycles_per_wgmma")
    rows = [("512 instructions, no sleep", "ffma_w4_b512_s0"), ("512, `__nanosleep(250)`", "ffma_w4_b512_s250"),
            ("512, `__nanosleep(500)`", "ffma_w4_b512_s500"), ("512, `__nanosleep(1000)`", "ffma_w4_b512_s1000"),
            ("512, `__nanosleep(2000)`", "ffma_w4_b512_s2000"), ("512, `__nanosleep(4000)`", "ffma_w4_b512_s4000"),
            ("128, `__nanosleep(500)`", "ffma_w4_b128_s500"), ("128, `__nanosleep(2000)`", "ffma_w4_b128_s2000"),
            ("softmax-like mix (mul, ex2, add, max), 512, no sleep, 4 warps", "softmax_w4_b512_s0"),
            ("the same on 8 warps", "softmax_w8_b512_s0")]
    print()
    print("| bursts | gap (cycles) | duty | IPC in bursts | cycles per wgmma | wgmma rate | loss / duty |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, key in rows:
        n = d + key + "_cycles_per_wgmma"
        p, cyc = m[n]["params"], med(n)
        loss = 1 - base / cyc
        print(f"| {label} | {p['alu_gap_cycles_median']:.0f} | {p['alu_duty_median']:.2f} | "
              f"{p['alu_in_burst_warp_ipc_median']:.3f} | {cyc:.1f} | {1 - loss:.2f} | {loss / p['alu_duty_median']:.2f} |")
    print()
    for n in (64, 128, 256):
        a, c = med(f"issue_duty_n{n}_alone_cycles_per_wgmma"), med(f"issue_duty_n{n}_ffma_w4_b512_s0_cycles_per_wgmma")
        print(f"N = {n}: alone {a:.1f}, beside back-to-back 512-instruction bursts {c:.1f} cycles per wgmma: {a / c:.2f} of the rate")
    f, u = "issue_mixed_ffma_mufu_w8_ffma_ipc", "issue_mixed_ffma_mufu_w8_mufu_ipc"
    print(f"one FFMA and one MUFU.EX2 warp per sub-partition: FFMA {med(f):.3f} per warp, MUFU {med(u):.4f} per warp "
          f"(sub-partitions with one of each: {par(f, 'sub_partitions_with_one_of_each')})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "validation/results/h100/issue.json")
