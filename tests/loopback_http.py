"""One HTTP client per test process, for plain HTTP to the servers the tests start on loopback.

`httpx.get(...)` makes a client for each request, and with it a TLS context that reads the CA
bundle again: about 0.1 s of CPU a request on a loaded 2-core machine (a third of a visibility
test's time), for connections that never use TLS. Same defaults as `httpx.get` (5 s timeout)."""

from __future__ import annotations

import atexit

import httpx

http = httpx.Client()
atexit.register(http.close)
