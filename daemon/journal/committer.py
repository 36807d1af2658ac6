"""The journal's commit thread: the durability wait (fdatasync) off the asyncio loop.

A coroutine that needs its line durable stages it first (on the loop, so the journal's order is
the order the table saw), then awaits `CommitThread.wait(seq)`. One thread per journal makes
the lines durable: it takes every waiter registered so far, makes the journal durable up to the
highest seq among them with one `fdatasync` (group commit: the lines staged while the last sync
ran share the next one), then wakes the waiters whose line is covered with one
`call_soon_threadsafe` per loop. The loop never blocks on the disk: a slow disk delays the
inputs that wait for it (their device commands go out only once durable), never a frame of
another device or an ACK.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

from daemon.journal.format import JournalError

Waiter = tuple[int, asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class CommitThread:
    """Makes a journal durable up to the seqs its waiters ask for, in a thread of its own.

    The hand-off is a `queue.SimpleQueue` (its put and get are C, and a put wakes the thread
    without any Python-level condition variable): the loop puts a waiter, the thread takes every
    waiter queued so far, syncs once for the highest seq, and wakes them all.
    """

    def __init__(self, sync: Callable[[int], None], name: str = "journal-commit") -> None:
        """`sync(seq)` makes every line up to `seq` durable (it may cover more), or raises."""
        self._sync = sync
        self._name = name
        self._lock = threading.Lock()
        # Waiters, then None once closed (the thread serves what came before it and ends).
        self._requests: queue.SimpleQueue[Waiter | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def wait(self, seq: int) -> asyncio.Future[None]:
        """A future of the running loop, done once every line up to `seq` is durable (or
        failed with the journal's error)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._closed:
                raise JournalError("journal closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            # Under the lock: nothing is queued after close's end mark.
            self._requests.put((seq, loop, future))
        return future

    def close(self) -> None:
        """Serve the waiters already registered, then end the thread."""
        with self._lock:
            if self._closed:
                thread = self._thread
            else:
                self._closed = True
                thread = self._thread
                if thread is not None:
                    self._requests.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        requests = self._requests
        closing = False
        while not closing:
            waiters: list[Waiter] = []
            item = requests.get()  # sleeps, the GIL released, until a waiter comes
            while True:
                if item is None:
                    closing = True
                else:
                    waiters.append(item)
                if requests.empty():  # one consumer: what is there stays there
                    break
                item = requests.get()
            if not waiters:
                continue
            error: BaseException | None = None
            try:
                # Every waiter taken is covered: the sync goes up to the highest of their seqs.
                self._sync(max(seq for seq, _, _ in waiters))
            except BaseException as exc:  # every waiter learns it; the journal has failed
                error = exc
            self._wake(waiters, error)

    @staticmethod
    def _wake(done: list[Waiter], error: BaseException | None) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        for _, loop, future in done:
            by_loop.setdefault(loop, []).append(future)
        for loop, futures in by_loop.items():
            # A closed loop raises RuntimeError: nobody waits there any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, futures, error)


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for future in futures:
        if future.done():
            continue  # its waiter was cancelled
        if error is None:
            future.set_result(None)
        else:
            # One exception object per waiter, so their tracebacks do not pile up on one.
            kind = type(error) if isinstance(error, JournalError) else JournalError
            future.set_exception(kind(str(error) or repr(error)))
