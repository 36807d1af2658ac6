"""Start a test API server (`serve_fake.py`, `serve_table.py`) as a subprocess and wait for its
port (no sleeping: the server prints it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).parent


@contextmanager
def fake_server(tokens_file: Path) -> Iterator[str]:
    """The API over the in-memory FakeTable."""
    with _serve(HERE / "serve_fake.py", str(tokens_file)) as url:
        yield url


@contextmanager
def table_server(tokens_file: Path, journal_dir: Path, config: Path | None = None) -> Iterator[str]:
    """The API over the real table runtime, every device simulated (default config: the
    embedded Thirteen table)."""
    extra = [str(config)] if config is not None else []
    with _serve(HERE / "serve_table.py", str(tokens_file), str(journal_dir), *extra) as url:
        yield url


@contextmanager
def _serve(script: Path, *args: str) -> Iterator[str]:
    # The server's logs go to a file beside its tokens (a pipe nobody drains would fill and
    # stall it); stdout carries only the PORT line.
    log_path = Path(args[0]).with_name(f"{script.stem}.log")
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith("PORT "):
                process.kill()
                process.wait(timeout=10)
                raise RuntimeError(f"{script.name} did not start: {log_path.read_text()[-3000:]}")
            yield f"http://127.0.0.1:{int(line.split()[1])}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
