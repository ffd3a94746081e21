#!/usr/bin/env python3
"""Runs every corpus case (cases.tsv) with two tools, alternating, and prints one TSV row
per case: chart, case, then median wall seconds and median peak RSS (KiB) for each tool.

Usage: run_cases.py CORPUS ROUNDS CHARTKIT HELM

Wall time is measured around fork/exec/wait with a monotonic clock (microsecond
resolution; GNU time's %e rounds to 10 ms, which is most of a chartkit run), peak RSS comes
from wait4's rusage of that one child.
"""
import os
import statistics
import subprocess
import sys
import time


def measure(argv, cwd):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4 already
    return wall, usage.ru_maxrss


def main():
    corpus, rounds, chartkit, helm = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(os.path.join(corpus, "cases.tsv")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    for row in rows:
        chart, case, command = row[0], row[1], row[4]
        args = command.split()[1:]
        times = {chartkit: [], helm: []}
        rss = {chartkit: [], helm: []}
        for _ in range(rounds):
            for tool in (chartkit, helm):
                wall, peak = measure([tool] + args, corpus)
                times[tool].append(wall)
                rss[tool].append(peak)
        print("\t".join([
            chart, case,
            f"{statistics.median(times[chartkit]):.6f}", str(int(statistics.median(rss[chartkit]))),
            f"{statistics.median(times[helm]):.6f}", str(int(statistics.median(rss[helm]))),
        ]), flush=True)


if __name__ == "__main__":
    main()
