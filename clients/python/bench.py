#!/usr/bin/env python3
"""Benchmarks of the Python client against a real daemon, beside the Swift client's figures
from the same run (`settings-bench daemon --only round-trips,watch --json`).

    swift build -c release --static-swift-stdlib
    python3 clients/python/bench.py            # --quick for a smoke run

Measures set -> watch event latency (p50/p99 of 1,000), gets one at a time, and gets
pipelined 1,000 deep, with the share of the pipelined time spent parsing JSON.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))

from settingsd_client import Client  # noqa: E402
from settingsd_client.protocol import parse_frames  # noqa: E402

QUICK = "--quick" in sys.argv


def binary(name: str) -> str:
    for configuration in ("release", "debug"):
        path = ROOT / ".build" / configuration / name
        if path.exists():
            return str(path)
    sys.exit(f"{name} is not built: run `swift build -c release --static-swift-stdlib` first")


def start_daemon(folder: pathlib.Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [binary("settingsd"), "run", "--db", str(folder / "bench.sqlite"), "--socket",
         str(folder / "bench.sock"), "--log-level", "warning", "--schemas", str(folder / "none"),
         "--system-dir", str(folder / "none")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    if "listening on" not in process.stdout.readline():
        sys.exit("settingsd did not start")
    return process


def watch_latency(socket: str, count: int):
    latencies = []
    with Client(socket) as setter, setter.watch(keys=["bench.latency"]) as changes:
        for _ in range(count):
            sent = time.perf_counter_ns()
            setter.set("bench.latency", sent)
            change = changes.next(timeout=5)
            latencies.append((time.perf_counter_ns() - change.values["bench.latency"]) / 1e9)
    latencies.sort()
    return latencies[len(latencies) // 2], latencies[len(latencies) * 99 // 100]


def single_gets(socket: str, count: int) -> float:
    with Client(socket) as client:
        client.set("bench.key", "value")
        for _ in range(200):
            client.get("bench.key")
        started = time.perf_counter()
        for _ in range(count):
            client.get("bench.key")
        return count / (time.perf_counter() - started)


def pipelined_gets(socket: str, count: int):
    """The rate of gets pipelined 1,000 deep, and the share of that time parsing takes."""
    with Client(socket) as client:
        client.set("bench.key", "value")
        started = time.perf_counter()
        for _ in range(count // 1000):
            pipeline = client.pipeline()
            for _ in range(1000):
                pipeline.get("bench.key")
            pipeline.execute()
        elapsed = time.perf_counter() - started
    # The client's own parser, on reads of 1,000 answers like the ones just received.
    text = "\n".join('{"found":true,"id":%d,"ok":true,"value":"value"}' % n for n in range(1000))
    parse_started = time.perf_counter()
    for _ in range(count // 1000):
        parse_frames(text)
    parsing = time.perf_counter() - parse_started
    return count / elapsed, parsing / elapsed


def swift_figures():
    """The Swift client's rows from `settings-bench daemon` (None when it is not built)."""
    bench = ROOT / ".build" / "release" / "settings-bench"
    if not bench.exists():
        return None
    arguments = [str(bench), "daemon", "--only", "round-trips,watch", "--json"]
    if QUICK:
        arguments.append("--quick")
    output = subprocess.run(arguments, capture_output=True, text=True, timeout=600).stdout
    rows = {}
    for line in output.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["measurement"]] = row
    return rows


def main() -> None:
    folder = pathlib.Path(tempfile.mkdtemp(prefix="sdbench-", dir="/tmp"))
    daemon = start_daemon(folder)
    socket = str(folder / "bench.sock")
    try:
        latency_count = 1000
        p50, p99 = watch_latency(socket, latency_count)
        single = single_gets(socket, 5_000 if QUICK else 50_000)
        pipelined, parsing_share = pipelined_gets(socket, 20_000 if QUICK else 200_000)
    finally:
        daemon.terminate()
        daemon.wait(10)
        shutil.rmtree(folder, ignore_errors=True)
    swift = swift_figures()

    def swift_cell(name: str, kind: str) -> str:
        if swift is None or name not in swift:
            return "(settings-bench not built)"
        row = swift[name]
        if kind == "latency":
            return f"p50 {row['value'] * 1e3:.3f} ms, p99 {row.get('p99', 0) * 1e3:.3f} ms"
        return f"{row['value'] / 1000:.1f} k/s"

    print(f"Python {sys.version.split()[0]}, settingsd {binary('settingsd')}")
    print(f"{'measurement':<44} {'Python client':<30} {'Swift client (same run)':<30} target")
    rows = [
        ("set -> watch event (1,000)", f"p50 {p50 * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms",
         swift_cell("set -> other client's watch event", "latency"), "p50 < 0.2 ms"),
        ("get, one at a time", f"{single / 1000:.1f} k/s",
         swift_cell("get round trips, one connection", "rate"), ""),
        ("get, pipelined 1000 deep", f"{pipelined / 1000:.1f} k/s",
         swift_cell("get, pipelined 1000 deep", "rate"), ">= 200 k/s"),
        ("  of which parsing the answers' JSON", f"{parsing_share * 100:.0f} %", "", ""),
    ]
    for name, ours, theirs, target in rows:
        print(f"{name:<44} {ours:<30} {theirs:<30} {target}")


if __name__ == "__main__":
    main()
