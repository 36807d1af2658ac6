"""Shared by the training tests: `tabled run --http` started as a person starts it, on a shipped
config, in a fresh working directory holding the tokens file the config names; and the trainer's
token beside the other people's."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from api_support import TOKENS
from api_support import auth as _auth

from daemon.api.tokens import token_entry

ROOT = Path(__file__).resolve().parents[2]
PAIGOW = ROOT / "config" / "paigow.toml"
TRAINER = ("chan.trainer", "trainer-token-0123456789abcdefghijklmnopqrst")
# A second supervisor: what two supervisors decide (a void, a placed hand corrected) needs one.
SECOND_SUPERVISOR = ("ma.supervisor", "supervisor2-token-0123456789abcdefghijklm")
PEOPLE = {**TOKENS, "trainer": TRAINER, "supervisor2": SECOND_SUPERVISOR}
# Each person's role, where the name is not the role.
ROLE_OF = {"supervisor2": "supervisor"}
TABLED = Path(sys.executable).with_name("tabled")


def auth(role: str) -> dict[str, str]:
    if role == "trainer":
        return {"Authorization": f"Bearer {TRAINER[1]}"}
    return _auth(role)


def write_people(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "\n".join(
            token_entry(actor, ROLE_OF.get(name, name), token)
            for name, (actor, token) in PEOPLE.items()
        ),
        encoding="utf-8",
    )
    path.chmod(0o600)
    return path


@contextmanager
def tabled_run(
    workdir: Path, config: Path | None = None, http: str = "127.0.0.1:0"
) -> Iterator[str]:
    """`tabled run --http 127.0.0.1:0 [--config CONFIG]` in `workdir`; yields the console's URL.
    The people's tokens go where the config's `[api] tokens_file` says (a config that names
    none is copied with one named, as `tabled token` would have been told)."""
    args = [str(TABLED), "run", "--http", http]
    text = (config or ROOT / "config" / "table.toml").read_text(encoding="utf-8")
    tokens = tomllib.loads(text).get("api", {}).get("tokens_file")
    if tokens is None:
        tokens = "var/tokens.toml"
        assert config is not None
        copy = workdir / config.name
        copy.write_text(text.replace("[api]\n", f'[api]\ntokens_file = "{tokens}"\n', 1))
        config = copy
    write_people(workdir / tokens)
    if config is not None:
        args += ["--config", str(config)]
    log = (workdir / "tabled-run.log").open("a")
    process = subprocess.Popen(args, cwd=workdir, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("{"):
            process.kill()
            process.wait(timeout=10)
            said = (workdir / "tabled-run.log").read_text()
            raise RuntimeError(f"tabled run did not start: {said[-3000:]}")
        yield str(json.loads(line)["http"])
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
