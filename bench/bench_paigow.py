"""Taiwan Pai Gow rules engine throughput, side by side with a naive peer.

    .venv/bin/python bench/bench_paigow.py [--n 20000] [--rounds 2000] [--seed 7]

The peer for classification is Art. 7(2) applied from scratch on every call (the derivation
the engine precomputes into a table at import); the peer for setting a hand is a brute force
that classifies all three splits from scratch. Also prints hand outcomes per second and the
p50/p99 of settling a full eight-door round (dealt from a shuffled set, random bets, stake
limits, commission). Depends on the machine's load.

The issue sets no goal for pai gow; these are ours, printed beside the figures with a met/MISSED
verdict: the precomputed classification at least 2x the from-scratch peer and setting a hand at
least 2x the brute force (each precomputation must pay for itself), and settling an eight-door
round p99 <= 2 ms, the budget of the Thirteen house way (wall time, and the thread's CPU time,
which a loaded machine inflates far less).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from daemon.rules import paigow
from daemon.rules.paigow.classes import _describe  # the Art. 7(2) derivation, as the peer

Tile = paigow.Tile


def rate(label: str, calls: int, run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    per_second = calls / elapsed
    print(f"  {label:<44} {per_second:>12,.0f} /s")
    return per_second


def peer_set_hand(tiles: tuple[Tile, ...]) -> tuple[object, object]:
    a, b, c, d = tiles
    best: tuple[object, object] | None = None
    for one, two in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
        k1, k2 = _describe(*one)[0], _describe(*two)[0]
        key = (max(k1, k2), min(k1, k2))
        if best is None or key > best:
            best = key
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    deals = []
    for _ in range(args.n):
        tiles = list(paigow.TILE_SET)
        rng.shuffle(tiles)
        deals.append(tuple(tiles))
    pairs = [(d[0], d[1]) for d in deals]
    fours = [d[:4] for d in deals]
    hands = [(paigow.set_hand(d[:4]), paigow.set_hand(d[4:8])) for d in deals]

    print(f"pai gow, {args.n:,} random deals (shared, loaded machine: compare ratios)")
    print("classify two tiles")
    engine = rate(
        "paigow.classify (precomputed)", args.n, lambda: [paigow.classify(*p) for p in pairs]
    )
    peer = rate("peer: Art. 7(2) from scratch", args.n, lambda: [_describe(*p) for p in pairs])
    classify_up = engine / peer
    print(f"  {'speed-up':<44} {classify_up:>12.1f} x")
    print("set a hand of four (Art. 6(2))")
    engine = rate("paigow.set_hand", args.n, lambda: [paigow.set_hand(t) for t in fours])
    peer = rate(
        "peer: classify 3 splits from scratch", args.n, lambda: [peer_set_hand(t) for t in fours]
    )
    set_up = engine / peer
    print(f"  {'speed-up':<44} {set_up:>12.1f} x")
    print("hand against the banker (Art. 6(3))")
    rate("paigow.hand_outcome", args.n, lambda: [paigow.hand_outcome(b, p) for b, p in hands])

    samples, cpu = [], []
    for _ in range(args.rounds):
        tiles = list(paigow.TILE_SET)
        rng.shuffle(tiles)
        dealt = [((tiles[i], tiles[i + 1]), (tiles[i + 2], tiles[i + 3])) for i in range(0, 32, 4)]
        doors = [paigow.Door(hand, rng.randrange(0, 2000)) for hand in dealt[1:]]
        start, start_cpu = time.perf_counter(), time.thread_time()
        paigow.settle_round(dealt[0], doors, rng.randrange(1, 5000))
        cpu.append(time.thread_time() - start_cpu)
        samples.append(time.perf_counter() - start)
    p99, cpu_p99 = percentile(samples, 0.99), percentile(cpu, 0.99)
    print(f"settle_round, eight doors, {args.rounds:,} rounds")
    print(f"  wall p50 {statistics.median(samples) * 1e6:,.0f} µs   p99 {p99 * 1e6:,.0f} µs")
    print(f"  cpu  p50 {statistics.median(cpu) * 1e6:,.0f} µs   p99 {cpu_p99 * 1e6:,.0f} µs")
    print("verdicts:")
    print(f"  classify: x{classify_up:.1f} the peer (goal >= x2: {verdict(classify_up >= 2)})")
    print(f"  set a hand: x{set_up:.1f} the peer (goal >= x2: {verdict(set_up >= 2)})")
    print(
        f"  settle_round p99: {p99 * 1e3:.3f} ms wall (goal <= 2 ms: {verdict(p99 <= 0.002)});"
        f" {cpu_p99 * 1e3:.3f} ms CPU (goal <= 2 ms: {verdict(cpu_p99 <= 0.002)})"
    )


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


if __name__ == "__main__":
    main()
