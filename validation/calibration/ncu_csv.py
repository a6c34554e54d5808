"""Nsight Compute's CSV (`ncu --csv --print-units base`): the metrics of each profiled launch. The CSV may follow
other output (the profiled program's own prints come first); rows before its header are skipped.
Standard library only."""
import csv


def launches(lines):
    """{launch ID: {"Kernel Name": name, metric: value, ...}} from the lines of one ncu run."""
    out, header = {}, None
    for r in csv.reader(lines):
        if r and r[0] == "ID":
            header = r
        elif header and len(r) == len(header):
            d = dict(zip(header, r))
            launch = out.setdefault(int(d["ID"]), {"Kernel Name": d["Kernel Name"]})
            launch[d["Metric Name"]] = float(d["Metric Value"].replace(",", ""))
    return out
