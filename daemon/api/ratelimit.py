"""Bad-token rate limiting: too many rejected tokens lock the guessing client out.

Two budgets. Per client: `max_failures` bad tokens within `window` seconds lock that client out
for `lockout` seconds. Across every client: `global_max_failures` bad tokens within `window`
(many addresses, each staying under its own budget) put the API on guard for `lockout` seconds:
every client with a bad token in the window is locked out at once, and while on guard a single
bad token locks its client out. A client that has not guessed (the dealer's console with its
valid token) is not affected by either budget, so a guesser cannot lock the table's staff out
from another address.

The lockout covers every request from the client that carries a token, valid or not: if any
valid token still worked during the lockout, the difference between 429 and 200 would tell a
guesser when it had found one. Requests without any token are not guesses and are not counted.

But a client is an address, and the consoles behind one proxy (or on one PC) share it: one
person's mistakes (a floor token tried on the table, five times) would lock every console there
out for a minute, in the middle of a round. So the consoles that are working keep working: a
token accepted from the client in the last `signed_in_for` seconds (`accepted`) is still served
from it while the client is locked out (`retry_after(client, digest)`); any other token is
refused with 429 without being looked up. A guesser then learns nothing new: the only tokens
that answer during a lockout are those already in use from its own address, each 256 bits, and
its guesses are never compared with the tokens file until the lockout ends. A console that
signs in for the first time during a lockout waits for its end, as before.

Clients are remembered least-recently-failed first, at most `max_clients` of them; a locked
client is never forgotten before its lockout ends, however many others come after it.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field


def client_key(address: str) -> str:
    """The unit a budget counts: an IPv4 address, or an IPv6 /64 (one host's usual share, so
    hopping through the addresses of one's own /64 buys no extra guesses)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip.ipv4_mapped) if isinstance(ip, ipaddress.IPv6Address) else str(ip)


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
        global_max_failures: int = 100,
        window: float = 60.0,
        lockout: float = 60.0,
        max_clients: int = 4096,
        signed_in_for: float = 900.0,
    ) -> None:
        self.clock = clock
        self.max_failures = max_failures
        self.global_max_failures = global_max_failures
        self.window = window
        self.lockout = lockout
        self.max_clients = max_clients
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        self._all_failures: deque[float] = deque()
        self.on_guard_until = 0.0
        self.signed_in_for = signed_in_for
        # (client, token digest) -> when the token was last accepted from the client; least
        # recently accepted first, at most `max_clients` of them.
        self._signed_in: OrderedDict[tuple[str, str], float] = OrderedDict()

    def on_guard(self) -> bool:
        """Whether the global budget is spent: one bad token now locks its client out."""
        return self.on_guard_until > self.clock()

    def retry_after(self, client: str, digest: str | None = None) -> float:
        """Seconds this client is still locked out for; 0 when it is not, or when `digest` (a
        token's hash) is of a token accepted from it in the last `signed_in_for` seconds."""
        key = client_key(client)
        state = self._clients.get(key)
        if state is None:
            return 0.0
        wait = max(0.0, state.locked_until - self.clock())
        if wait > 0 and digest is not None:
            seen = self._signed_in.get((key, digest))
            if seen is not None and seen > self.clock() - self.signed_in_for:
                return 0.0
        return wait

    def accepted(self, client: str, digest: str) -> None:
        """A token (its hash) was accepted from `client`: a console there is signed in."""
        pair = (client_key(client), digest)
        self._signed_in[pair] = self.clock()
        self._signed_in.move_to_end(pair)
        while len(self._signed_in) > self.max_clients:
            self._signed_in.popitem(last=False)

    def failed(self, client: str) -> list[str]:
        """Count a rejected token from `client`; the clients this failure locks out (itself,
        or every recent guesser when it spends the global budget), empty for none."""
        now = self.clock()
        key = client_key(client)
        state = self._clients.get(key)
        if state is None:
            self._make_room(now)
            state = self._clients[key] = _Client()
        self._clients.move_to_end(key)
        state.failures.append(now)
        _expire(state.failures, now - self.window)
        self._all_failures.append(now)
        _expire(self._all_failures, now - self.window)

        locked: list[str] = []
        if len(self._all_failures) >= self.global_max_failures and not self.on_guard():
            self.on_guard_until = now + self.lockout
            for name, other in self._clients.items():
                _expire(other.failures, now - self.window)
                if other.failures and other.locked_until <= now:
                    other.locked_until = now + self.lockout
                    other.failures.clear()
                    locked.append(name)
            self._all_failures.clear()
            return locked
        budget = 1 if self.on_guard() else self.max_failures
        if len(state.failures) >= budget and state.locked_until <= now:
            state.locked_until = now + self.lockout
            state.failures.clear()
            locked.append(key)
        return locked

    def _make_room(self, now: float) -> None:
        """Forget the least recently failed clients that are not locked out, until there is a
        free slot; when every slot holds a locked client, grow (locks expire, so this is bounded
        by the rate of guesses, not by memory an attacker chooses)."""
        if len(self._clients) < self.max_clients:
            return
        for name in list(self._clients):
            if len(self._clients) < self.max_clients:
                return
            if self._clients[name].locked_until <= now:
                del self._clients[name]

    def __len__(self) -> int:
        return len(self._clients)


def _expire(times: deque[float], before: float) -> None:
    while times and times[0] <= before:
        times.popleft()
