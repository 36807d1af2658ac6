"""The API's doors in one app: the Host allow-list (HTTP and WebSocket), the push feed's
Origin check, the bad-token budgets and the refusal summaries, the tokens file's mode, the
`[api]` keys that configure them. The same doors on a real `tabled run`: test_doors_process.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import TOKENS, auth
from fake_table import FakeTable, ManualClock
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from structlog.testing import capture_logs

from daemon.api.app import create_app
from daemon.api.doors import DoorsPolicy, serving_problem
from daemon.api.errors import ApiError
from daemon.api.gate import AUTH_REFUSED, Gate, RefusalLog
from daemon.api.ratelimit import AuthFailureLimiter, client_key
from daemon.api.tokens import TokenStore, check_tokens_file, token_entry
from daemon.config import REQUIRED_DEVICES, ApiConfig, ConfigError, parse_config


def refusals(table: FakeTable, event: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in table.journal if e["event"] == event]


@pytest.fixture
def pit_client(table: FakeTable, tokens_file: Path, clock: ManualClock) -> Iterator[TestClient]:
    """The API reached by the name IT gave the table PC (listed in [api] allowed_hosts)."""
    config = ApiConfig(tokens_file=tokens_file, allowed_hosts=("table07.pit.example",))
    app = create_app(table, config, clock=clock)
    with TestClient(app, base_url="http://table07.pit.example") as c:
        yield c


# --- Host names -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/state", "/api/health", "/metrics", "/"])
def test_a_request_for_another_name_is_refused_before_anything_is_read(
    client: TestClient, table: FakeTable, path: str
) -> None:
    # DNS rebinding: the attacker's name now resolves to 127.0.0.1; the browser still sends it.
    r = client.get(path, headers={**auth("dealer"), "Host": "rebind.attacker.example:8700"})
    assert r.status_code == 421
    assert r.json()["error"] == "forbidden_host"
    assert "rebind.attacker.example" in r.json()["message"]
    assert "allowed_hosts" in r.json()["message"]
    [summary] = refusals(table, "api.input_refused")
    assert summary["by_reason"] == {"forbidden_host": 1}
    assert "dealer-token" not in str(table.journal)


@pytest.mark.parametrize(
    "host", ["localhost:8700", "127.0.0.1:8700", "[::1]:8700", "LOCALHOST", "testserver"]
)
def test_the_loopback_names_and_the_address_served_on_are_answered(
    client: TestClient, host: str
) -> None:
    r = client.get("/api/state", headers={**auth("dealer"), "Host": host})
    assert r.status_code == 200, r.text


def test_names_in_allowed_hosts_are_answered_and_no_others(pit_client: TestClient) -> None:
    assert pit_client.get("/api/state", headers=auth("dealer")).status_code == 200
    other = {**auth("dealer"), "Host": "table08.pit.example"}
    assert pit_client.get("/api/state", headers=other).status_code == 421


def test_the_configured_listen_address_is_answered(table: FakeTable, tokens_file: Path) -> None:
    config = ApiConfig(tokens_file=tokens_file, listen="10.7.0.21:8700")
    with TestClient(create_app(table, config)) as c:
        r = c.get("/api/health", headers={"Host": "10.7.0.21:8700"})
        assert r.status_code == 200
        assert c.get("/api/health", headers={"Host": "10.7.0.22:8700"}).status_code == 421


def test_a_push_connection_for_another_name_is_closed_saying_why(
    client: TestClient, table: FakeTable
) -> None:
    headers = {"host": "rebind.attacker.example", "origin": "http://rebind.attacker.example"}
    with client.websocket_connect("/api/events", headers=headers) as ws:
        message = ws.receive_json()
        assert message["error"] == "forbidden_host"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4403
    assert table._subscribers == []


# --- Origins ----------------------------------------------------------------------------------


def _hello(client: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    with client.websocket_connect("/api/events", headers=headers) as ws:
        ws.send_json({"token": TOKENS["dealer"][1], "after": None})
        message: dict[str, Any] = ws.receive_json()
        if message["type"] == "error":
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            message["code"] = closed.value.code
        return message


def test_an_origin_equal_to_an_allowed_host_but_not_the_consoles_is_refused(
    pit_client: TestClient,
) -> None:
    # The console is served on port 80 here: a page on another port of the same name (another
    # service on the PC) is another origin.
    assert _hello(pit_client, {"origin": "http://table07.pit.example"})["type"] == "hello"
    for origin in ("http://table07.pit.example:8080", "http://table08.pit.example"):
        answer = _hello(pit_client, {"origin": origin})
        assert (answer["error"], answer["code"]) == ("forbidden_origin", 4403), origin


def test_refused_origins_are_summarised_not_journaled_one_by_one(
    client: TestClient, table: FakeTable, clock: ManualClock
) -> None:
    for _ in range(30):
        assert _hello(client, {"origin": "http://evil.example"})["code"] == 4403
    assert len(refusals(table, "api.input_refused")) == 1
    clock.advance(61)
    _hello(client, {"origin": "http://evil.example"})
    first, summary = refusals(table, "api.input_refused")
    assert first["refused"] == 1
    assert summary["by_reason"] == {"forbidden_origin": 30}
    assert summary["clients"] == {"testclient": 30}


# --- bodies and fields that are not the API's -------------------------------------------------


def test_malformed_requests_are_counted_and_summarised_per_interval(
    client: TestClient, table: FakeTable, clock: ManualClock
) -> None:
    headers = {**auth("dealer"), "Content-Type": "application/json"}
    for _ in range(200):
        assert client.post("/api/actions/open_round", content=b"{", headers=headers).status_code
        r = client.post("/api/actions/open_round", json={"paylod": {}}, headers=headers)
        assert r.status_code == 422
    assert len(refusals(table, "api.input_refused")) == 1
    clock.advance(61)
    client.get("/no/such/page")
    first, summary = refusals(table, "api.input_refused")
    assert first["by_reason"] == {"malformed": 1}
    assert summary["by_reason"] == {"invalid_input": 200, "malformed": 199, "not_found": 1}
    assert summary["paths"] == {"/api/actions/open_round": 399, "/no/such/page": 1}
    metrics = client.get("/metrics").text
    assert 'reason="malformed"} 200' in metrics
    assert table.acts == []


def test_a_malformed_push_hello_is_counted_too(client: TestClient, table: FakeTable) -> None:
    with client.websocket_connect("/api/events") as ws:
        ws.send_text("not json")
        assert ws.receive_json()["error"] == "invalid_input"
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()
    [summary] = refusals(table, "api.input_refused")
    assert summary["by_reason"] == {"invalid_hello": 1}


# --- bad tokens -------------------------------------------------------------------------------


def _gate(tmp_path: Path, clock: ManualClock) -> tuple[Gate, list[tuple[str, dict[str, Any]]]]:
    file = tmp_path / "tokens.toml"
    file.write_text(token_entry("lei.dealer", "dealer", "the-dealers-token"))
    file.chmod(0o600)
    lines: list[tuple[str, dict[str, Any]]] = []

    async def journal(event: str, payload: dict[str, Any]) -> None:
        lines.append((event, payload))

    limiter = AuthFailureLimiter(clock)
    return Gate(TokenStore(file), limiter, RefusalLog(journal, clock)), lines


def test_guesses_spread_over_many_addresses_spend_the_global_budget(
    tmp_path: Path, clock: ManualClock
) -> None:
    gate, lines = _gate(tmp_path, clock)

    async def guesses() -> list[int]:
        statuses = []
        for n in range(540):  # nine guesses from each of 60 addresses: each under its own ten
            try:
                await gate.authenticate(f"guess-{n}", f"127.0.0.{n % 60 + 2}")
            except ApiError as exc:
                statuses.append(exc.status)
        # The dealer's console, which never guessed, still signs in.
        principal = await gate.authenticate("the-dealers-token", "127.0.0.1")
        assert principal.actor == "lei.dealer"
        await gate.refusals.close()
        return statuses

    statuses = asyncio.run(guesses())
    assert statuses.count(429) > 400
    assert statuses[:100] == [401] * 100
    assert gate.limiter.on_guard()
    # 540 refusals, two journal lines: the first at once, the summary at close.
    assert [event for event, _ in lines] == [AUTH_REFUSED, AUTH_REFUSED]
    summary = lines[1][1]
    assert summary["global_budget_spent"] is True
    assert summary["refused"] == 539
    assert len(summary["locked_out"]) == 20  # named; the rest are counted
    assert summary["distinct_clients"] == 60
    assert "guess-" not in str(lines)  # fingerprints only


def test_a_locked_client_is_remembered_however_many_others_come_after(
    clock: ManualClock,
) -> None:
    limiter = AuthFailureLimiter(clock, global_max_failures=10**9)
    for _ in range(10):
        limiter.failed("192.0.2.1")
    assert limiter.retry_after("192.0.2.1") > 0
    for n in range(5000):
        limiter.failed(f"10.{n // 250}.{n % 250}.1")
    assert len(limiter) <= 4096 + 1
    assert limiter.retry_after("192.0.2.1") > 0
    clock.advance(61)
    assert limiter.retry_after("192.0.2.1") == 0


def test_addresses_of_one_ipv6_64_share_one_budget(clock: ManualClock) -> None:
    limiter = AuthFailureLimiter(clock)
    for n in range(10):
        limiter.failed(f"2001:db8:7:1::{n + 1:x}")
    assert limiter.retry_after("2001:db8:7:1::ffff") > 0
    assert limiter.retry_after("2001:db8:7:2::1") == 0
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"


# --- the tokens file's mode -------------------------------------------------------------------


def test_a_tokens_file_others_may_read_is_refused_with_the_chmod_that_fixes_it(
    tmp_path: Path,
) -> None:
    file = tmp_path / "tokens.toml"
    file.write_text(token_entry("lei.dealer", "dealer", "the-dealers-token"))
    for mode in (0o644, 0o640, 0o604, 0o620):
        file.chmod(mode)
        problem = check_tokens_file(file)
        assert problem is not None
        assert f"mode {mode:04o}" in problem
        assert f"chmod 600 {file}" in problem
        store = TokenStore(file)
        assert store.lookup("the-dealers-token") is None
        assert store.last_error == problem
    file.chmod(0o600)
    assert check_tokens_file(file) is None
    assert TokenStore(file).lookup("the-dealers-token") is not None


def test_a_reload_of_a_file_made_readable_keeps_the_last_good_set_and_says_why(
    tmp_path: Path,
) -> None:
    file = tmp_path / "tokens.toml"
    file.write_text(token_entry("lei.dealer", "dealer", "the-dealers-token"))
    file.chmod(0o600)
    store = TokenStore(file)
    assert store.lookup("the-dealers-token") is not None
    file.write_text(token_entry("sam", "dealer", "sams-token"))
    file.chmod(0o644)
    with capture_logs() as logs:
        assert store.lookup("the-dealers-token") is not None  # kept
        assert store.lookup("sams-token") is None  # not taken from a file others may read
    [problem] = [e for e in logs if e["event"] == "api.tokens_unreadable"]
    assert "mode 0644" in problem["problem"]
    assert problem["kept"] == 1
    file.chmod(0o600)
    assert store.lookup("sams-token") is not None
    assert store.last_error is None


# --- the [api] keys ---------------------------------------------------------------------------


# A table the config accepts: the devices its game's regulation names.
DEVICES = {"devices": {name: {"port": f"sim://{name}"} for name in REQUIRED_DEVICES["thirteen"]}}


def test_the_api_keys_parse_and_bad_values_name_the_key(tmp_path: Path) -> None:
    config = parse_config(
        {
            **DEVICES,
            "api": {
                "allowed_hosts": ["Table07.Pit.Example", "10.7.0.21", "[fd00::7]"],
                "tls_cert": "tls/cert.pem",
                "tls_key": "tls/key.pem",
                "console_idle_seconds": 120,
            },
        },
        base=tmp_path,
    ).api
    assert config.allowed_hosts == ("table07.pit.example", "10.7.0.21", "fd00::7")
    assert config.tls_cert == tmp_path / "tls/cert.pem"
    assert config.console_idle_seconds == 120
    assert config.plain_http_behind_proxy is False
    # Longer than the five-minute arrangement: a dealer waiting on the players stays signed in.
    assert parse_config(DEVICES).api.console_idle_seconds == 600
    for api, words in (
        ({"allowed_hosts": ["http://x.example"]}, "api.allowed_hosts"),
        ({"allowed_hosts": ["x.example:8700"]}, "api.allowed_hosts"),
        ({"tls_cert": "cert.pem"}, "api.tls_cert: set both"),
        ({"plain_http_behind_proxy": "yes"}, "api.plain_http_behind_proxy"),
        ({"console_idle_seconds": 0}, "api.console_idle_seconds"),
    ):
        with pytest.raises(ConfigError, match=words):
            parse_config({**DEVICES, "api": api})


def test_listening_beyond_loopback_needs_tls_or_the_named_opt_out(tmp_path: Path) -> None:
    plain = ApiConfig()
    assert serving_problem(plain, "127.0.0.1:8700") is None
    assert serving_problem(plain, "[::1]:8700") is None
    problem = serving_problem(plain, "0.0.0.0:8700")
    assert problem is not None
    assert "tls_cert" in problem and "plain_http_behind_proxy" in problem
    assert "\n" not in problem
    assert serving_problem(ApiConfig(plain_http_behind_proxy=True), "0.0.0.0:8700") is None
    missing = ApiConfig(tls_cert=tmp_path / "c.pem", tls_key=tmp_path / "k.pem")
    assert f"{tmp_path / 'c.pem'}: no such file" in str(serving_problem(missing, "0.0.0.0:8700"))
    (tmp_path / "c.pem").write_text("not a certificate")
    (tmp_path / "k.pem").write_text("not a key")
    assert "not a PEM certificate" in str(serving_problem(missing, "127.0.0.1:8700"))


def test_the_console_learns_its_idle_timeout_from_the_api(
    table: FakeTable, tokens_file: Path
) -> None:
    config = ApiConfig(tokens_file=tokens_file, console_idle_seconds=42)
    with TestClient(create_app(table, config)) as c:
        assert c.get("/api/actions", headers=auth("dealer")).json()["console_idle_seconds"] == 42


def test_the_policy_answers_to_the_address_served_on_not_to_the_wildcard() -> None:
    policy = DoorsPolicy()
    policy.serving_at("0.0.0.0")  # noqa: S104 - the wildcard, not a binding
    assert policy.hosts == {"localhost", "127.0.0.1", "::1"}
    policy.serving_at("10.7.0.21")
    assert policy.host_allowed("10.7.0.21:8700", None)
    assert not policy.host_allowed(None, ("10.7.0.21", 8700))


def test_a_lockout_spares_the_tokens_working_from_that_address_and_no_others(
    clock: ManualClock,
) -> None:
    """The exemption of daemon.api.ratelimit: a token accepted from the client within
    `signed_in_for` seconds is served while the client is locked out; one accepted longer ago,
    or from another address, or never, is not."""
    limiter = AuthFailureLimiter(clock, signed_in_for=30)
    limiter.accepted("192.0.2.1", "sha256:dealer")
    limiter.accepted("192.0.2.7", "sha256:pit")
    clock.advance(20)
    for _ in range(10):
        limiter.failed("192.0.2.1")
    assert limiter.retry_after("192.0.2.1") > 0
    assert limiter.retry_after("192.0.2.1", "sha256:dealer") == 0
    assert limiter.retry_after("192.0.2.1", "sha256:guess") > 0
    assert limiter.retry_after("192.0.2.1", "sha256:pit") > 0  # working, but elsewhere
    clock.advance(11)  # the dealer's console has said nothing for 31 s: signed out, as it were
    assert limiter.retry_after("192.0.2.1", "sha256:dealer") > 0
    clock.advance(50)  # the lockout's minute has passed
    assert limiter.retry_after("192.0.2.1", "sha256:guess") == 0
