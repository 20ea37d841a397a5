#!/usr/bin/env python3
"""Reference values for the capacity acceptance test's server model.

The test server (mongobench testserver --delay 2ms --per-in-flight 1ms)
holds each reply 2 ms plus 1 ms per other request in flight when the request
arrives. This simulates that model under an open loop at a fixed rate, with
arrivals jittered by up to JITTER ms (a client's pacing is never exact) and
each request staying in flight EXTRA ms beyond its hold (the reply's write
and the server's own lateness), and prints p50/p99 of the latency and the
highest rate, in steps of 10/s, whose p99 stays under 10 ms.

Why a simulation and not the formula 1/(1-rate): at a fixed spacing s the
model has a band of self-consistent latencies, from about 1/(1-rate) up to
about 2/(1-rate) (at 800/s, every whole latency from 5 to 9 ms: a request
held L ms sees the L/s requests that arrived in the L ms before it). A
disturbance moves it up the band and only a gap in the arrivals brings it
down, so the percentiles depend on how exactly arrivals are paced.

    scripts/capacity-model.py            the table for jitter 0, 0.25, 0.5, 1 ms
"""
import heapq
import random


def simulate(rate, jitter, extra, n=40000, seed=1):
    rnd = random.Random(seed)
    spacing = 1000.0 / rate
    arrivals = sorted(k * spacing + rnd.uniform(0, jitter) for k in range(n))
    busy = []  # end times of the requests in flight
    lat = []
    for t in arrivals:
        while busy and busy[0] <= t:
            heapq.heappop(busy)
        hold = 2.0 + len(busy)
        heapq.heappush(busy, t + hold + extra)
        lat.append(hold + extra)
    lat = sorted(lat[n // 10:])  # the first tenth is warm-up
    return lat[len(lat) // 2], lat[int(0.99 * len(lat))]


def capacity(jitter, extra):
    best = 0
    for rate in range(500, 1000, 10):
        if simulate(rate, jitter, extra)[1] < 10:
            best = rate
    return best


def main():
    print("jitter  extra   p50/p99 ms at 700, 800, 850, 900/s        highest rate with p99 < 10 ms")
    for jitter in (0, 0.25, 0.5, 1.0):
        for extra in (0, 0.2):
            cells = []
            for rate in (700, 800, 850, 900):
                p50, p99 = simulate(rate, jitter, extra)
                cells.append(f"{p50:4.1f}/{p99:4.1f}")
            print(f"{jitter:5.2f}  {extra:5.2f}   {'  '.join(cells)}   {capacity(jitter, extra)}/s")


if __name__ == "__main__":
    main()
