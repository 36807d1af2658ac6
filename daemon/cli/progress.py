"""A progress bar for long work on a terminal: `label [#######.....]  57%  570/1000`, redrawn in
place on stderr at most ten times a second, erased when the work is done.

It stays silent when stderr is not a terminal (a pipe, a file, a test, systemd), so logs and
scripts never see it, and for the first half second, so short work never flickers one. Only
the standard library; nothing here is needed to do the work.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

WIDTH = 30
DELAY = 0.5  # seconds before the first drawing
INTERVAL = 0.1  # seconds between drawings


def on_terminal(stream: TextIO) -> bool:
    """Whether a bar would be seen: a terminal, and not a dumb one or one NO_PROGRESS silences."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM") != "dumb" and not os.environ.get("NO_PROGRESS")


class Progress:
    """`done` of `total` units (lines, bytes, rounds) of the work named `label`."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "",
    ) -> None:
        self.label, self.total, self.unit = label, max(0, total), unit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = on_terminal(self.stream) if enabled is None else enabled
        self.clock = clock
        self.done = 0
        self._started = clock()
        self._drawn_at: float | None = None
        self._width = 0

    def advance(self, step: int = 1) -> None:
        self.update(self.done + step)

    def advanced(self, _what: object = None) -> None:
        """One more unit done, as a callback that is told what (a line to print, ignored)."""
        self.advance()

    def update(self, done: int) -> None:
        self.done = min(done, self.total) if self.total else done
        if not self.enabled:
            return
        now = self.clock()
        if now - self._started < DELAY:
            return
        if self._drawn_at is not None and now - self._drawn_at < INTERVAL:
            return
        self._drawn_at = now
        self._draw(self.line())

    def line(self) -> str:
        """The bar as it is now (what is drawn)."""
        if self.total <= 0:
            return f"{self.label}  {self.done}{self.unit}"
        share = self.done / self.total
        filled = int(share * WIDTH)
        bar = "#" * filled + "." * (WIDTH - filled)
        return f"{self.label} [{bar}] {share * 100:3.0f}%  {self.done}/{self.total}{self.unit}"

    def _draw(self, text: str) -> None:
        pad = " " * max(0, self._width - len(text))
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the bar (if one was drawn), leaving the line for what is printed next."""
        if self._drawn_at is not None and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self._drawn_at, self._width = None, 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
