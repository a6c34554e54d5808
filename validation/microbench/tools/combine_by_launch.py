#!/usr/bin/env python3
"""For every pair experiment of a joined combine/smpairs run (tools/ncu_smpairs.py output), the share of its
pairs whose two CTAs are at most NEAR apart in launch order (blockIdx), and the share of the second readers'
requests that combined. The CTA of each SM comes from the run's recorded SM ids (params.smids, in CTA order).

usage: combine_by_launch.py [validation/results/h100/l2_smpairs_ncu.json] [--near 8]
"""
import argparse
import json


def pairs_of(row, n):
    """The (SM, SM) pairs that share data in one measurement, and the SM of each CTA."""
    p = row["params"]
    sm = [int(s) for s in p["smids"].split(",")]
    name = row["measurement"]
    if name.startswith("l2_combine_dist"):
        d = int(p["distance_ctas"])
        return [(sm[k], sm[k + d]) for k in range(n) if (k // (2 * d) + 1) * 2 * d <= n and k % (2 * d) < d], sm
    if name.startswith("l2_combine_far"):
        return [(sm[k], sm[k + n // 2]) for k in range(n // 2)], sm
    if name.startswith("l2_smpairs_d"):
        d = int(p["sm_id_step"])
        return [(s, s + d) for s in range(n) if (s // (2 * d) + 1) * 2 * d <= n and s % (2 * d) < d], sm
    return None, sm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("joined", nargs="?", default="validation/results/h100/l2_smpairs_ncu.json")
    ap.add_argument("--near", type=int, default=8)
    a = ap.parse_args()
    rows = json.load(open(a.joined))["rows"]
    none = {r["measurement"].split("_")[1]: r["sm_requests_over_delivered"] for r in rows if r["measurement"].endswith("none_bw")}
    print(f"{'measurement':36s} {'pairs':>5s} {'CTAs <= ' + str(a.near) + ' apart':>16s} {'combined':>9s}")
    for r in rows:
        n = r["params"]["ctas"]
        pairs, sm = pairs_of(r, n)
        if not pairs:
            continue
        cta = {s: i for i, s in enumerate(sm)}
        near = sum(1 for x, y in pairs if abs(cta[x] - cta[y]) <= a.near) / len(pairs)
        alone = none[r["measurement"].split("_")[1]]
        # Each combined pair makes one request instead of two: requests per byte = alone x (1 - combined pairs / n).
        combined = (1 - r["sm_requests_over_delivered"] / alone) * n / len(pairs)
        print(f"{r['measurement']:36s} {len(pairs):5d} {near:16.2f} {combined:9.2f}")


if __name__ == "__main__":
    main()
