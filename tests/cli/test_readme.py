"""The README's "Using it" section, run as written: each line of its shell block, in order, as a
process in a fresh folder holding a copy of `config/`, so the README stays true.

Lines that serve until stopped (`tabled run` without `--autoplay`, `tabled sim`, `tabled floor
demo`) are started, waited for until they say they are up, and stopped (SIGTERM, SIGINT for the
demo; each must exit 0) before the first later line that does not talk to them: `tabled token`
and the client commands talk to `tabled run --http`, `tabled devices` to `tabled sim`. `export
NAME=$(...)` sets NAME for the lines after it, as in a shell. The one file a line only describes
(`t.toml`, "with a [feed]") is written: the default config and a [feed] on a nats-server the test
starts, the table's key made (`tabled keys init`) and the journal shipped first (`tabled feed
ship`). The fixed ports (8700, 8800)
are swapped for free ones, so the suite's workers and other programs never meet on them.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from daemon.floor.localservers import NATS_SERVER, NatsServer
from tests.daemon.cli_support import REPO, environment

SECTION = re.compile(r"^## Using it\n(.*?)^## ", re.MULTILINE | re.DOTALL)
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"\s{2,}# .*$")
EXPORT = re.compile(r"^export (\w+)=\$\((.+)\)$")
# What each long-running command is up on saying, and which later commands talk to it.
READY = {
    "run --http": '{"http": ',
    "run": '"event": "table.running"',
    "sim": '{"control": ',
    "floor": "floor: http",
}
USERS = {"run": {"token", "status", "act", "journal"}, "sim": {"devices"}, "floor": set()}


def readme_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = SECTION.search(text)
    assert section is not None, "README.md has no '## Using it' section"
    block = BLOCK.search(section.group(1))
    assert block is not None, "the 'Using it' section has no ```sh block"
    return [COMMENT.sub("", line).strip() for line in block.group(1).splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Background:
    """A long-running line: its process, what it has said, and when it said it is up."""

    kind: str
    process: subprocess.Popen[str]
    said: list[str] = field(default_factory=list)
    up: threading.Event = field(default_factory=threading.Event)

    def watch(self, stream: object, ready: str) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.said.append(line)
            if ready in line:
                self.up.set()
        self.up.set()  # it ended: whoever waits looks at the exit status

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT if self.kind == "floor" else signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def kind_of(command: str) -> str | None:
    words = command.split()
    if words[:2] == ["tabled", "run"] and "--autoplay" not in words:
        return "run --http" if "--http" in words else "run"
    if words[:2] == ["tabled", "sim"]:
        return "sim"
    if words[:3] == ["tabled", "floor", "demo"]:
        return "floor"
    return None


def test_the_readme_using_it_section_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("dot") is None or not NATS_SERVER.exists():
        pytest.skip("the README's lines need graphviz's dot and nats-server")
    lines = readme_lines()
    assert any(line.startswith("tabled run --http") for line in lines)
    shutil.copytree(REPO / "config", tmp_path / "config")
    bin_dir = Path(sys.executable).parent
    env = environment(PATH=f"{bin_dir}:{environment()['PATH']}")
    assert shutil.which("tabled", path=env["PATH"]), "tabled is not installed beside python"
    running: Background | None = None
    broker: NatsServer | None = None
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    served: dict[str, str] = {}  # what each long-running line said, by kind
    try:
        for line in lines:
            command = line
            # The README's fixed ports become free ones: another test or program may hold them,
            # or expect nothing on them (test_http.py: "cannot reach ... 8700").
            for port in (8700, 8800):
                command = command.replace(f":{port}", f":{free_port()}")
            if command == "tabled floor demo":
                command += " --http 127.0.0.1:0"
            export = EXPORT.match(command)
            inner = export.group(2) if export else command
            subcommand = inner.split()[1] if inner.startswith("tabled ") else ""
            if running is not None and subcommand not in USERS[running.kind.split()[0]]:
                assert running.stop() == 0, "".join(running.said)
                served[running.kind] = "".join(running.said)
                running = None
            if "--config t.toml" in command and not (tmp_path / "t.toml").exists():
                broker = NatsServer(tmp_path).start()
                default = (REPO / "config" / "table.toml").read_text(encoding="utf-8")
                feed = f'\n[feed]\nservers = ["{broker.url}"]\n'
                (tmp_path / "t.toml").write_text(default + feed, encoding="utf-8")
                # A table with a feed signs its chain: it has its key (var/table.key).
                made = subprocess.run(
                    ["tabled", "keys", "init", "--config", "t.toml"],
                    cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120,
                    check=False,
                )  # fmt: skip
                assert made.returncode == 0, made.stdout + made.stderr
                # A table with a feed has shipped its journal (its stream exists) by now.
                shipped = subprocess.run(
                    ["tabled", "feed", "ship", "--config", "t.toml"],
                    cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120,
                    check=False,
                )  # fmt: skip
                assert shipped.returncode == 0, shipped.stdout + shipped.stderr
            kind = kind_of(command)
            if kind is not None:
                process = subprocess.Popen(
                    ["bash", "-c", command], cwd=tmp_path, env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                )  # fmt: skip
                running = Background(kind, process)
                threading.Thread(
                    target=running.watch, args=(process.stdout, READY[kind]), daemon=True
                ).start()
                assert running.up.wait(180), f"{line}: not up in time"
                assert process.poll() is None, f"{line}: ended:\n{''.join(running.said)}"
                continue
            run = subprocess.run(
                ["bash", "-c", inner],
                cwd=tmp_path, env=env, text=True, capture_output=True, timeout=180, check=False,
            )  # fmt: skip
            assert run.returncode == 0, f"{line}\n{run.stdout}\n{run.stderr}"
            if export:
                env[export.group(1)] = run.stdout.strip()
            outputs[line] = run
        if running is not None:
            assert running.stop() == 0, "".join(running.said)
            running = None
    finally:
        if running is not None and running.process.poll() is None:
            running.process.kill()
            running.process.wait()
        if broker is not None:
            broker.destroy()

    # What the lines said is what the README says they do.
    by_start = {line.split("#")[0].strip(): run for line, run in outputs.items()}
    status = next(r for line, r in by_start.items() if line.startswith("tabled status"))
    assert "T01 thirteen" in status.stdout
    verified = next(r for line, r in by_start.items() if line.startswith("tabled verify-log"))
    assert verified.stdout.startswith("OK: ")
    assert "autoplay: 5 round(s) of paigow" in next(
        r.stdout for line, r in by_start.items() if "--autoplay" in line
    )
    devices = next(r for line, r in by_start.items() if line.startswith("tabled devices"))
    assert devices.stdout.strip()
    ranked = next(r for line, r in by_start.items() if "tabled rules thirteen rank" in line)
    assert json.loads(ranked.stdout.splitlines()[0])
    traced = next(r for line, r in by_start.items() if line.startswith("tabled trace"))
    assert all(a["article"].startswith("Portaria 15/90/M") for a in json.loads(traced.stdout))
    assert (tmp_path / "thirteen.svg").read_text().lstrip().startswith("<?xml")
    assert env["TABLED_TOKEN"]
    # Served before anyone had a token: a warning naming the command, not a refusal.
    assert "tabled token NAME ROLE --append" in served["run --http"]
