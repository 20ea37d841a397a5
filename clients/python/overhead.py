"""Measures what each Python stack adds per call: the adapter runs findOne
and insertOne against mongobench's null test server (which answers at once
and stores nothing), and this prints the latency percentiles the adapter
reported. Not a test: the figures depend on the machine.

    python overhead.py --mongobench /path/to/mongobench [--ops 5000] [--workers 1]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "tests"))
from conftest import STACKS, Adapter, Server, init_msg  # noqa: E402

COLLECTIONS = [{"name": "items", "schema": {"fields": {"_id": {"type": "int"}, "value": {"type": "string"}}},
                "indexes": []}]
OPS = [
    {"id": 0, "name": "get", "kind": "findOne", "collection": "items"},
    {"id": 1, "name": "put", "kind": "insertOne", "collection": "items"},
]
ARGS = {0: {"filter": {"_id": 1}}, 1: {"document": {"_id": 1, "value": "x"}}}


def pct(sorted_ns: list, p: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(p * len(sorted_ns)))] / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mongobench", required=True)
    ap.add_argument("--ops", type=int, default=5000)
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args()
    server = Server([a.mongobench, "testserver", "--addr", "127.0.0.1:0", "--for", "30m"])
    try:
        print(f"{'stack':20} {'kind':10} {'calls':>6} {'p50 us':>8} {'p90 us':>8} {'p99 us':>8} {'mean us':>8}")
        for stack in STACKS:
            for opid, kind in ((0, "findOne"), (1, "insertOne")):
                ad = Adapter(stack)
                try:
                    ad.send(init_msg(stack, server.uri, "mb_overhead", COLLECTIONS, OPS))
                    ad.expect("ready")
                    per = a.ops // a.workers
                    # A warm-up phase first: imports, connections, caches.
                    ad.run_phase(a.workers, {w: [[opid, ARGS[opid]]] * 200 for w in range(a.workers)})
                    results, _, _ = ad.run_phase(a.workers, {w: [[opid, ARGS[opid]]] * per for w in range(a.workers)})
                    ad.send({"type": "exit"})
                    ad.wait()
                finally:
                    ad.close()
                lat = sorted(r[3] for r in results if r[5] is None)
                print(f"{stack:20} {kind:10} {len(lat):6} {pct(lat, .5):8.1f} {pct(lat, .9):8.1f} "
                      f"{pct(lat, .99):8.1f} {statistics.fmean(lat) / 1000:8.1f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
