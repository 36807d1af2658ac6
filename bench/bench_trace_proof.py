"""The whole proof of the trace (issue 26): every guard of every enforced article disabled, the
article's tests run against it, with its time, beside the goals.

    .venv/bin/python bench/bench_trace_proof.py [--jobs 2] [--write] [--json FILE]

Runs `daemon.trace.prove.prove` over every enforced article and prints the mutants killed,
survived and in error, the wall time and the CPU time of the children (what the machine's
load does not inflate), the load average, and each day's share of the suite's rotating
sample (tests/trace/test_proof.py) as the sum of its mutants' seconds over the jobs. Goals,
with a met/MISSED verdict: 0 survivors and 0 errors; the whole proof <= 600 s of wall time;
each day's share <= 60 s. The peer is the issue's audit: nine guards broken by hand, one
survivor. `--write` keeps the run in docs/traceability-proof.json and rewrites
docs/traceability.md with it (`tabled trace -o docs/traceability.md` reads that file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from daemon.trace.proofdoc import DAYS, GOAL_DAY, LAST_RUN, day_shares, save, survivors, totals
from daemon.trace.prove import prove
from daemon.trace.report import markdown, trace

ROOT = Path(__file__).resolve().parents[1]
GOAL_WALL = 600.0


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="keep the run in docs/")
    parser.add_argument("--json", type=Path, help="write every mutant's outcome to this file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proofs = prove(
        jobs=args.jobs,
        progress=lambda done, total: print(
            f"\r  {done}/{total} mutants", end="", file=sys.stderr, flush=True
        ),
    )
    wall = time.monotonic() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    load_after = os.getloadavg()[0]
    print(file=sys.stderr)
    total = totals(proofs, wall)
    days = day_shares({p.article: p.seconds for p in proofs}, args.jobs)
    errors = total["errors"]
    print(
        f"whole proof: {total['articles']} enforced articles, {total['mutants']} mutants, "
        f"{total['unmutated']} guards not mutated"
    )
    print(
        f"  killed {total['killed']}  survived {total['survived']}  errors {errors}"
        f"   goal 0 survived, 0 errors: {verdict(total['survived'] == 0 and errors == 0)}"
        "   (peer, the issue's audit: 9 guards by hand, 1 survived)"
    )
    print(f"  wall {wall:.0f} s   goal <= {GOAL_WALL:.0f} s: {verdict(wall <= GOAL_WALL)}")
    print(
        f"  CPU of the children {cpu:.0f} s; load average {load_before:.1f} before, "
        f"{load_after:.1f} after ({os.cpu_count()} cores), jobs {args.jobs}"
    )
    print(
        f"  each day's share of the suite's sample (every {DAYS}th article; its mutants' "
        "seconds / jobs): "
        + ", ".join(f"{d:.0f}" for d in days)
        + f" s   goal <= {GOAL_DAY:.0f} s: {verdict(max(days) <= GOAL_DAY)}"
    )
    for line in survivors(proofs):
        print(f"  survived: {line}")
    for p in proofs:
        for o in p.outcomes:
            if o.result == "error":
                print(f"  error: {p.article}: {o.guard}: {o.by}")
    if args.json:
        args.json.write_text(json.dumps([p.as_json() for p in proofs], indent=1), "utf-8")
    if args.write:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        figures = {
            **total,
            "command": f".venv/bin/python bench/bench_trace_proof.py --jobs {args.jobs} --write",
            "wall": f"{wall:.0f} s (goal <= {GOAL_WALL:.0f} s: {verdict(wall <= GOAL_WALL)})",
            "cpu": f"{cpu:.0f} s of the children's CPU",
            "jobs": args.jobs,
            "load": f"load average {load_before:.1f} before, {load_after:.1f} after, "
            f"{os.cpu_count()} cores, jobs {args.jobs}",
            "verdict": "each day's share "
            + ", ".join(f"{d:.0f}" for d in days)
            + f" s (goal <= {GOAL_DAY:.0f} s: {verdict(max(days) <= GOAL_DAY)})",
        }
        save(ROOT / LAST_RUN, proofs, when, figures)
        (ROOT / "docs" / "traceability.md").write_text(markdown(trace(base=ROOT)), "utf-8")
        print(f"wrote {LAST_RUN} and docs/traceability.md")
    return 0 if total["survived"] == 0 and errors == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
