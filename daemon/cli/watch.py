"""`tabled status --watch`: the table's status as a live terminal view, like `upsc`, `cgps` or
`watch`: the same text as `tabled status`, redrawn in place every `--interval` seconds on the
terminal's alternate screen (the shell's screen comes back as it was on Ctrl-C), with the time of
the last reading. A table that stops answering does not end it: the last reading stays, marked
NOT UPDATED with the reason, until the table answers again. Only a token the table refuses
(401, 403) ends it, with the usual message and exit status.

In a pipe (not a terminal) it prints each reading that differs from the one before, then a line
`--`, so `tabled status --watch | tee status.log` keeps a record of each change.

What a reading holds from the table (a fault's words, a reason) is shown with its control
characters escaped (daemon/safetext.py): only this view's own sequences move the cursor.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

from daemon.safetext import safe, safe_lines

ENTER = "\x1b[?1049h\x1b[?25l"  # the alternate screen, the cursor hidden
LEAVE = "\x1b[?25h\x1b[?1049l"  # the cursor back, the shell's screen back
HOME = "\x1b[H"
CLEAR_LINE = "\x1b[K"
CLEAR_BELOW = "\x1b[J"


class Refused(Exception):
    """Raised by a reading the table will not give (a refused token): the view ends."""


def _fit(text: str, width: int) -> str:
    """Each line cut to the terminal's width (a wrapped line would push the view off screen)."""
    return "\n".join(
        line if len(line) <= width else line[: width - 1] + "…" for line in text.split("\n")
    )


def watch(
    read: Callable[[], str],
    interval: float,
    out: TextIO | None = None,
    *,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], str] = lambda: time.strftime("%H:%M:%S"),
) -> int:
    """Show `read()` until Ctrl-C (0). `read` raises Refused to end the view, or any other
    exception (OSError, a client error) to mark the last reading NOT UPDATED."""
    stream = sys.stdout if out is None else out
    terminal = stream.isatty()
    shown, last_body, problem, stamp = "", "", "", ""
    if terminal:
        stream.write(ENTER)
    try:
        while True:
            try:
                last_body, problem, stamp = safe_lines(read()), "", now()
            except Refused:
                raise
            except Exception as exc:
                problem = safe(str(getattr(exc, "message", exc)) or type(exc).__name__)
            if terminal:
                footer = (
                    f"read at {stamp} · every {interval:g} s · Ctrl-C to quit" if last_body else ""
                )
                if problem:
                    footer = f"NOT UPDATED since {stamp if last_body else 'start'}: {problem}"
                size = shutil.get_terminal_size()
                screen = _fit(f"{last_body}\n\n{footer}".strip("\n"), size.columns)
                lines = screen.split("\n")[: max(1, size.lines - 1)]
                stream.write(
                    HOME + "".join(line + CLEAR_LINE + "\n" for line in lines) + CLEAR_BELOW
                )
            else:
                reading = f"NOT UPDATED: {problem}" if problem else last_body
                if reading != shown:
                    stream.write(f"{reading}\n--\n")
                    shown = reading
            stream.flush()
            sleep(interval)
    except KeyboardInterrupt:
        return 0
    finally:
        if terminal:
            stream.write(LEAVE)
            stream.flush()
