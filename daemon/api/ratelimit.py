"""Bad-token rate limiting: too many rejected tokens from one client locks that client out.

The lockout covers every request from the client that carries a token, valid or not: if a valid
token still worked during the lockout, the difference between 429 and 200 would tell a guesser
when it had found one. Requests without any token are not guesses and are not counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class _Client:
    failures: deque[float] = field(default_factory=deque)
    locked_until: float = 0.0


class AuthFailureLimiter:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        max_failures: int = 10,
        window: float = 60.0,
        lockout: float = 60.0,
        max_clients: int = 4096,
    ) -> None:
        self.clock = clock
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self.max_clients = max_clients
        self._clients: dict[str, _Client] = {}

    def retry_after(self, client: str) -> float:
        """Seconds this client is still locked out for; 0 when it is not."""
        state = self._clients.get(client)
        if state is None:
            return 0.0
        return max(0.0, state.locked_until - self.clock())

    def failed(self, client: str) -> bool:
        """Count a rejected token; True when this failure starts a lockout."""
        now = self.clock()
        state = self._clients.get(client)
        if state is None:
            if len(self._clients) >= self.max_clients:
                self._forget_idle(now)
            state = self._clients.setdefault(client, _Client())
        state.failures.append(now)
        while state.failures and state.failures[0] <= now - self.window:
            state.failures.popleft()
        if len(state.failures) >= self.max_failures and state.locked_until <= now:
            state.locked_until = now + self.lockout
            state.failures.clear()
            return True
        return False

    def _forget_idle(self, now: float) -> None:
        idle = [
            name
            for name, s in self._clients.items()
            if s.locked_until <= now and (not s.failures or s.failures[-1] <= now - self.window)
        ]
        for name in idle:
            del self._clients[name]
        if len(self._clients) >= self.max_clients:
            # Every slot is busy: drop the oldest rather than grow without bound.
            del self._clients[next(iter(self._clients))]
