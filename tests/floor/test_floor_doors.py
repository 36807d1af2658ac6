"""The floor's doors are the table's (daemon.api.doors): beyond loopback only with TLS or the
proxy opt-out, refused in one line before anything starts; TLS served by the floor itself."""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import websockets

from daemon.floor.localservers import free_port
from tests.floor.floor_support import REPO, FloorEnv

OPENSSL = Path("/usr/bin/openssl")


def tabled_floor(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", "floor", "--config", str(config), *args],
        capture_output=True, text=True, check=False, cwd=REPO, timeout=60,
    )  # fmt: skip


def test_beyond_loopback_without_tls_is_refused_before_anything_starts(tmp_path: Path) -> None:
    # The database is not running: the refusal comes before the floor would reach for it.
    down = f"postgresql://floor@127.0.0.1:{free_port()}/floor"
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\ndatabase = "{down}"\n')
    port = free_port()
    clear = tabled_floor(config, "--http", f"0.0.0.0:{port}")
    assert clear.returncode == 2, clear.stderr
    [line] = clear.stderr.splitlines()
    assert line.startswith(
        f"tabled floor: --http 0.0.0.0:{port}: 0.0.0.0:{port} is beyond loopback"
    )
    assert "tls_cert" in line and "plain_http_behind_proxy" in line
    # The table's checks and wording for the new keys.
    config.write_text(f'[floor]\ndatabase = "{down}"\n[api]\ntls_cert = "floor.crt"\n')
    half = tabled_floor(config)
    assert half.returncode == 2
    assert "api.tls_cert: set both tls_cert and tls_key, or neither" in half.stderr
    config.write_text(f'[floor]\ndatabase = "{down}"\n[api]\nallowed_hosts = ["https://x"]\n')
    named = tabled_floor(config)
    assert named.returncode == 2 and "api.allowed_hosts: 'https://x' is not a host" in named.stderr
    config.write_text(
        f'[floor]\ndatabase = "{down}"\n[api]\ntls_cert = "no.crt"\ntls_key = "no.key"\n'
    )
    missing = tabled_floor(config)
    assert missing.returncode == 2 and "tls_cert/tls_key" in missing.stderr
    assert "no such file" in missing.stderr
    assert "Traceback" not in clear.stderr + half.stderr + named.stderr + missing.stderr


@pytest.mark.skipif(not OPENSSL.exists(), reason="needs the openssl command")
def test_tls_is_served_by_the_floor(env: FloorEnv, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [str(OPENSSL), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=floor", "-addext",
         "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    key.chmod(0o600)
    env.config.write_text(
        env.config.read_text().replace(
            "[api]\n",
            f'[api]\ntls_cert = "{cert}"\ntls_key = "{key}"\n'
            'allowed_hosts = ["floor.pit.example"]\n',
        )
    )
    process = env.start_floor()
    assert process.url.startswith("https://127.0.0.1:")
    port = int(process.url.rsplit(":", 1)[1])
    trust = ssl.create_default_context(cafile=str(cert))
    audit = {"Authorization": f"Bearer {env.tokens['audit']}"}
    with httpx.Client(base_url=process.url, verify=trust, timeout=30) as client:
        assert client.get("/api/tables", headers=audit).status_code == 200
        named = client.get("/api/tables", headers={**audit, "Host": "floor.pit.example"})
        assert named.status_code == 200
        other = client.get("/api/tables", headers={**audit, "Host": "rebind.example"})
        assert other.status_code == 421
    # The same port does not answer in clear.
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)

    async def hello() -> dict[str, object]:
        async with websockets.connect(
            f"wss://127.0.0.1:{port}/api/feed", ssl=trust, origin=f"https://127.0.0.1:{port}"
        ) as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"token": env.tokens["pit"]}))
            answer: dict[str, object] = json.loads(await ws.recv())
            return answer

    assert asyncio.run(hello())["type"] == "hello"
    assert process.stop() == 0
