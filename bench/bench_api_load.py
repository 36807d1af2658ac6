"""The API cannot slow the table: autoplay round rate with and without API load, in one run.

    python bench/bench_api_load.py [--rounds N] [--clients 50] [--rate 200] [--repeat 1]
                                   [--only SCENARIO] [--tree CHECKOUT]

Each scenario starts `tabled run --http 127.0.0.1:0 --autoplay N --progress` (the embedded
Thirteen table, every device simulated, journal durability fsync in a temporary directory) and
times its rounds from the progress lines, leaving out the first `--warmup` rounds (start-up,
clients connecting):

- `unloaded`: the API served, nobody calling it (the peer of every other row);
- `loaded`: `--clients` surveillance consoles on the push feed (`/api/events`, asking for
  `"batch": true` as the dealer console does: the events queued for a console go out in one
  message; a client the daemon drops for falling behind reconnects with `after` its last seq;
  they run in a child process niced +10, as consoles on other machines would not take the
  table PC's cores) and `--rate` `GET /api/state` a second, open loop over 8 keep-alive
  connections (a request whose turn comes while all 8 are busy is counted as refused by the
  bench, so the load stays bounded);
- `loaded/single`: the same, the consoles asking for one message a journal event (a client
  that does not ask for batches);
- in both loaded runs the load alternates (`--segment` rounds with it, as many without: the
  consoles disconnect, the reads pause), and the loaded segments' median rate is compared with
  the unloaded segments' of the same daemon: a machine whose load drifts (other work on its
  cores) moves both alike. `unloaded`, a whole run without load, is printed beside them;
- `loaded elsewhere`: the `loaded` load, alternating the same way, sent to another daemon
  playing on the same machine while this one is timed: what the load takes from the table
  through the machine's cores alone (the consoles, the reader and the other daemon's API
  process), the peer of `loaded` (the API is served by a process of its own,
  daemon/api/process.py: what is left between the two rows is the table's own cost);
- `slow client`: one console that sends its hello and never reads (a small receive buffer);
  the daemon must drop it (close code 4408, `daemon.api.fanout`) and keep its memory bounded.

Latency of a state read is measured from the moment the request was due (open loop), so a
stalled API is not hidden by the bench waiting for it. The clients run in this process, the
daemon in its own; on one machine they share its cores, so load average and each process's CPU
are printed beside the figures: `daemon cpu` is the table's process, `api cpu` its API
process(es) (a tree whose API is a thread shows none).

Goals (issue 10 item 2): loaded round rate >= 90 % of the unloaded rate of the same run; state
read p99 <= 100 ms. Each is printed beside its goal with `met` or `MISSED`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import resource
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "api"))

from api_support import TOKENS, write_tokens  # noqa: E402 - the tests' fixed tokens

RATE_GOAL = 0.90
P99_GOAL_MS = 100.0
CONNECTIONS = 8
ELSEWHERE = "loaded elsewhere"


@dataclass
class Run:
    name: str
    rounds: list[float] = field(default_factory=list)  # perf_counter of each progress line
    latencies: list[float] = field(default_factory=list)
    refused: int = 0
    errors: int = 0
    pushed: int = 0
    dropped: int = 0
    reconnects: int = 0
    daemon_cpu: float = 0.0
    api_cpu: float = 0.0
    rss_kib: tuple[int, int] = (0, 0)
    slow_closed: str = ""
    segments: list[tuple[int, bool]] = field(default_factory=list)  # (first round, loaded)

    def segment_rates(self) -> tuple[float, float]:
        """Median rounds/s of the loaded segments and of the unloaded ones between them."""
        rates: dict[bool, list[float]] = {True: [], False: []}
        for (start, loaded), (end, _) in itertools.pairwise(self.segments):
            span = self.rounds[end] - self.rounds[start]
            if span > 0:
                rates[loaded].append((end - start) / span)
        return (
            statistics.median(rates[True]) if rates[True] else 0.0,
            statistics.median(rates[False]) if rates[False] else 0.0,
        )

    wall: float = 0.0

    def rate(self, warmup: int) -> float:
        marks = self.rounds[warmup:]
        if len(marks) < 2:
            return 0.0
        return (len(marks) - 1) / (marks[-1] - marks[0])

    def p(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _config(folder: Path) -> Path:
    tokens = write_tokens(folder / "tokens.toml")
    text = (ROOT / "config" / "table.toml").read_text(encoding="utf-8")
    text = text.replace('tokens_file = "var/tokens.toml"', f'tokens_file = "{tokens}"')
    path = folder / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _proc_cpu(pid: int) -> float:
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def _api_cpu(pid: int) -> float:
    """CPU seconds of the daemon's API processes now (its children running the API worker)."""
    total = 0.0
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(OSError):
                if b"daemon.api.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                    total += _proc_cpu(int(child))
    return total


def _rss_kib(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def _state_reader(
    host: str, port: int, run: Run, rate: float, *, stop: asyncio.Event, on: Any
) -> None:
    """Open loop: a request is due every 1/rate s, sent on a free keep-alive connection."""
    token = TOKENS["surveillance"][1]
    request = (
        f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\n\r\n"
    ).encode()
    free: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(CONNECTIONS):
        free.put_nowait(await asyncio.open_connection(host, port))

    async def one(due: float, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        reader, writer = conn
        try:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            if not head.startswith(b"HTTP/1.1 200"):
                run.errors += 1
            run.latencies.append(time.perf_counter() - due)
            free.put_nowait(conn)
        except (OSError, asyncio.IncompleteReadError):
            run.errors += 1
            with contextlib.suppress(OSError):
                free.put_nowait(await asyncio.open_connection(host, port))

    interval = 1.0 / rate
    due = time.perf_counter()
    tasks: set[asyncio.Task[None]] = set()
    while not stop.is_set():
        due += interval
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if not on.is_set():
            continue
        if free.empty():
            run.refused += 1
            continue
        task = asyncio.ensure_future(one(due, free.get_nowait()))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    for task in list(tasks):
        task.cancel()


def _last_seq(raw: str | bytes) -> int | None:
    """The last `"seq":N` of an event message, without decoding the whole of it."""
    text = raw if isinstance(raw, str) else raw.decode()
    if text.startswith('{"type":"events"'):
        text = text[text.rfind('{"seq":') :]  # the last event's own seq, not one in a payload
    at = text.find('"seq":')
    if at < 0 or text.startswith('{"type":"state"'):
        return None
    start = at + 6
    while start < len(text) and text[start] == " ":
        start += 1
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[start:end])


async def _console(url: str, counts: dict[str, int], batch: bool, on: Any) -> None:
    after: int | None = None
    while True:
        while not on.is_set():  # the load is off: this console is not connected
            await asyncio.sleep(0.05)
        try:
            async with connect(url, max_size=None, open_timeout=60) as ws:
                hello = {"token": TOKENS["surveillance"][1], "after": after, "batch": batch}
                await ws.send(json.dumps(hello))
                async for raw in ws:
                    seq = _last_seq(raw)
                    if seq is not None:
                        text = raw if isinstance(raw, str) else raw.decode()
                        counts["pushed"] += text.count('"prev":') if batch else 1
                        after = seq
                    if not on.is_set():
                        after = None  # a new console when the load comes back
                        break
        except websockets.ConnectionClosed as closed:
            if closed.rcvd is not None and closed.rcvd.code == 4408:
                counts["dropped"] += 1
            elif closed.rcvd is not None and closed.rcvd.code != 1000:
                counts["other_close"] += 1
            else:
                return  # the daemon went away: the run is over
        except (OSError, websockets.InvalidHandshake):
            return  # the daemon is going (or gone)


def consoles(url: str, clients: int, batch: bool, out: int, on: Any) -> None:
    """In a child process, niced (consoles are other machines; here they share the cores):
    run the consoles until the daemon goes away, then write the counts to `out`."""
    os.nice(10)
    counts = {"pushed": 0, "dropped": 0, "other_close": 0}

    async def all_of_them() -> None:
        await asyncio.gather(*(_console(url, counts, batch, on) for _ in range(clients)))

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(all_of_them())
    os.write(out, json.dumps(counts).encode())
    os.close(out)


async def _slow_console(host: str, port: int, run: Run, stop: asyncio.Event) -> None:
    """A console that says hello and never reads; afterwards, read what it was sent."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (host, port))
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    await loop.sock_sendall(
        sock,
        (
            f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode(),
    )
    answer = b""
    while b"\r\n\r\n" not in answer:  # the handshake's answer, before any frame
        answer += await loop.sock_recv(sock, 1)
    hello = json.dumps({"token": TOKENS["surveillance"][1], "after": None}).encode()
    mask = b"\x00\x00\x00\x00"
    await loop.sock_sendall(sock, bytes([0x81, 0x80 | len(hello)]) + mask + hello)
    started = time.perf_counter()
    await stop.wait()
    # Now read everything: the close frame (opcode 8) tells whether and how it was dropped.
    data = b""
    sock.setblocking(True)
    sock.settimeout(10)
    with contextlib.suppress(OSError):
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    sock.close()
    code = _close_code(data)
    run.slow_closed = (
        f"closed {code} ({len(data) // 1024} KiB reached it)"
        if code
        else f"not closed after {time.perf_counter() - started:.0f} s ({len(data) // 1024} KiB "
        "reached it: the kernel's buffers and 4,096 queued events were not yet full)"
    )


def _close_code(data: bytes) -> int | None:
    at = 0
    while at + 2 <= len(data):
        opcode, size = data[at] & 0x0F, data[at + 1] & 0x7F
        at += 2
        if size == 126:
            size, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif size == 127:
            size, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        if opcode == 8 and size >= 2:
            return int.from_bytes(data[at : at + 2], "big")
        at += size
    return None


def _start_consoles(
    url: str, clients: int, batch: bool, on: Any
) -> tuple[multiprocessing.Process, int]:
    read_end, write_end = os.pipe()
    process = multiprocessing.get_context("fork").Process(
        target=consoles, args=(url, clients, batch, write_end, on)
    )
    process.start()
    os.close(write_end)
    return process, read_end


async def _daemon(
    label: str, rounds: int, args: argparse.Namespace, folder: Path
) -> tuple[asyncio.subprocess.Process, str]:
    """`tabled run --http --autoplay ROUNDS --progress` and the URL it serves."""
    journal = folder / f"journal-{label.replace(' ', '-').replace('/', '-')}"
    command = [
        sys.executable, "-m", "daemon", "run", "--config", str(_config(folder)),
        "--journal", str(journal), "--http", "127.0.0.1:0", "--autoplay", str(rounds),
        "--seed", "7", "--progress",
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=args.tree,
    )
    assert process.stdout is not None
    url = ""
    while not url:
        line = (await process.stdout.readline()).decode()
        if not line:
            raise RuntimeError(f"{label}: the daemon did not start")
        with contextlib.suppress(ValueError, KeyError, TypeError):
            url = json.loads(line)["http"]
    return process, url


async def _end(process: asyncio.subprocess.Process | None) -> None:
    if process is not None and process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
    if process is not None:
        await process.wait()


async def scenario(name: str, args: argparse.Namespace, folder: Path) -> Run:  # noqa: PLR0915 - one run, start to end
    run = Run(name)
    stop = asyncio.Event()
    load: list[asyncio.Task[None]] = []
    console_process: multiprocessing.Process | None = None
    on = multiprocessing.get_context("fork").Event()
    read_end = -1
    other: asyncio.subprocess.Process | None = None
    process, url = await _daemon(name, args.rounds, args, folder)
    assert process.stdout is not None
    try:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        target = url
        if name == ELSEWHERE:
            # The same load, on another daemon playing on the same machine: what the load
            # takes from the timed table through the machine's cores alone.
            other, target = await _daemon(name + " (target)", 10**6, args, folder)
        cpu0, rss0, start = _proc_cpu(process.pid), _rss_kib(process.pid), time.perf_counter()
        api0 = _api_cpu(process.pid)
        if name.startswith("loaded"):
            on.set()
            at, to = target.removeprefix("http://").rsplit(":", 1)
            console_process, read_end = _start_consoles(
                f"ws://{at}:{to}/api/events", args.clients, name != "loaded/single", on
            )
            load.append(
                asyncio.ensure_future(_state_reader(at, int(to), run, args.rate, stop=stop, on=on))
            )
        elif name == "slow client":
            load.append(asyncio.ensure_future(_slow_console(host, int(port), run, stop)))
        async for raw in process.stdout:
            if raw.startswith(b"round "):
                run.rounds.append(time.perf_counter())
                if name.startswith("loaded") and args.segment:
                    # Alternate: `segment` rounds with the load, `segment` without, and so on.
                    done = len(run.rounds) - args.warmup
                    if done >= 0 and done % args.segment == 0:
                        loaded = (done // args.segment) % 2 == 0
                        (on.set if loaded else on.clear)()
                        run.segments.append((len(run.rounds) - 1, loaded))
                if len(run.rounds) == args.rounds:
                    run.rss_kib = (rss0, _rss_kib(process.pid))
                    run.daemon_cpu = _proc_cpu(process.pid) - cpu0
                    run.api_cpu = _api_cpu(process.pid) - api0
                    run.wall = time.perf_counter() - start
        stop.set()
        await asyncio.gather(*load, return_exceptions=True)
        await process.wait()
        await _end(other)
        # The run may end with the load off: the consoles, waiting to connect, must try once
        # more (the daemon is gone: they end) before their counts can be read.
        on.set()
        if console_process is not None:
            await asyncio.to_thread(console_process.join, 30)
            with os.fdopen(read_end, "rb") as counts_in:
                counts = json.loads(counts_in.read() or b"{}")
            run.pushed, run.dropped = counts.get("pushed", 0), counts.get("dropped", 0)
            run.errors += counts.get("other_close", 0)
    finally:
        stop.set()
        for task in load:
            task.cancel()
        await _end(process)
        await _end(other)
        if console_process is not None and console_process.is_alive():
            console_process.terminate()
    return run


def report(runs: list[Run], args: argparse.Namespace) -> None:
    base = [r for r in runs if r.name == "unloaded"]
    peer = statistics.median(r.rate(args.warmup) for r in base) if base else 0.0
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 shared cores)")
    print(
        f"{'scenario':16} {'rounds/s':>8} {'peer r/s':>8} {'share':>7} {'goal':>6} {'':6} "
        f"{'p50 ms':>7} "
        f"{'p99 ms':>7} {'goal':>5} {'':6} {'reads':>6} {'refused':>7} {'pushed':>8} "
        f"{'dropped':>7} {'daemon cpu':>10} {'api cpu':>7} {'rss KiB':>15}"
    )
    for run in runs:
        rate, run_peer = run.rate(args.warmup), peer
        if run.segments:
            # Loaded segments against the unloaded ones between them, in the same daemon.
            rate, run_peer = run.segment_rates()
        share = rate / run_peer if run_peer else 0.0
        loaded = run.name != "unloaded"
        rate_verdict = ("met" if share >= RATE_GOAL else "MISSED") if loaded else "peer"
        p99 = run.p(0.99)
        lat_verdict = ("met" if p99 <= P99_GOAL_MS else "MISSED") if run.latencies else ""
        if run.name == ELSEWHERE:  # the machine's share, beside the goal's rows: no verdict
            rate_verdict, lat_verdict = "peer", "peer"
        cpu = f"{run.daemon_cpu / run.wall:.0%}" if run.wall else "-"
        api = f"{run.api_cpu / run.wall:.0%}" if run.wall and run.api_cpu else "-"
        print(
            f"{run.name:16} {rate:8.2f} {run_peer:8.2f} {share:7.0%} {'>=90%':>6} "
            f"{rate_verdict:6} {run.p(0.5):7.1f} {p99:7.1f} "
            f"{'<=100' if run.latencies else '':>5} {lat_verdict:6} {len(run.latencies):6d} "
            f"{run.refused:7d} {run.pushed:8d} {run.dropped:7d} {cpu:>10} {api:>7} "
            f"{run.rss_kib[0]:>7}->{run.rss_kib[1]:<7}"
        )
        if run.slow_closed:
            print(f"{'':16} the client that never reads: {run.slow_closed}")
        if run.errors:
            print(f"{'':16} {run.errors} state reads failed or consoles closed otherwise")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"CPU: state reader {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.1f} s; "
        f"consoles + daemons {children.ru_utime + children.ru_stime:.1f} s "
        f"({args.clients} consoles niced +10, {args.rate:.0f} reads/s)"
    )


async def main(args: argparse.Namespace) -> None:
    names = ["unloaded", "loaded", "loaded/single", ELSEWHERE, "slow client"]
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        for _ in range(args.repeat):
            for name in names:
                if args.only and name not in args.only:
                    continue
                runs.append(await scenario(name, args, Path(tmp)))
                print(f"  {name}: {runs[-1].rate(args.warmup):.2f} rounds/s", file=sys.stderr)
    report(runs, args)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=150)
    p.add_argument("--warmup", type=int, default=20, help="rounds left out at the start")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--rate", type=float, default=200.0, help="GET /api/state per second")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument(
        "--segment",
        type=int,
        default=10,
        help="loaded runs alternate this many rounds with the load and without (0: always on)",
    )
    p.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    p.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="run the daemon from this checkout (`git archive` of another commit: before/after)",
    )
    return p.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
