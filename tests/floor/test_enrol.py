"""`tabled floor enrol`: a floor admin enrols a table with its key; a lost key takes two admins.

Run as processes against a real PostgreSQL; the registry and the audit rows are read back.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from daemon.api.tokens import new_token, token_entry
from daemon.journal.provenance import TableKey
from daemon.shipper.nkey import make_seed
from tests.floor.floor_support import REPO, FloorEnv


def enrol(env: FloorEnv, role_or_token: str, *args: str) -> subprocess.CompletedProcess[str]:
    token = env.tokens.get(role_or_token, role_or_token)
    return subprocess.run(
        [sys.executable, "-m", "daemon", "floor", "enrol", *args, "--config", str(env.config)],
        check=False, capture_output=True, text=True, cwd=REPO, timeout=60,
        env={**os.environ, "TABLED_TOKEN": token},
    )  # fmt: skip


def second_admin(env: FloorEnv) -> str:
    token = new_token()
    tokens = Path(env.config).parent / "tokens.toml"
    with tokens.open("a") as fh:
        fh.write(token_entry("admin.two", "admin", token) + "\n")
    return token


def test_an_admin_enrols_and_a_lost_key_takes_two_admins(env: FloorEnv) -> None:
    first, second = TableKey.generate(), TableKey.generate()
    done = enrol(env, "admin", "T07", "--key", first.public, "--game", "thirteen", "--pit", "B")
    assert done.returncode == 0, done.stderr
    assert f"T07 enrolled with key {first.fingerprint} by admin.person" in done.stdout
    rows = env.psql("SELECT table_id, game, pit, enrolled_by FROM enrolled_tables")
    assert rows == [("T07", "thirteen", "B", "admin.person")]

    # Not an admin: refused, recorded.
    refused = enrol(env, "pit", "T08", "--key", second.public)
    assert refused.returncode == 3 and "takes a floor admin" in refused.stderr, refused.stderr
    # A bad key or table id: one line, exit 2 or 3, nothing enrolled.
    bad = enrol(env, "admin", "T08", "--key", "ed25519:nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    bad_id = enrol(env, "admin", "X';DROP", "--key", second.public)
    assert bad_id.returncode == 3 and "not a table id" in bad_id.stderr, bad_id.stderr
    no_token = enrol(env, "not-a-token", "T08", "--key", second.public)
    assert no_token.returncode == 2 and "not one of" in no_token.stderr, no_token.stderr

    again = enrol(env, "admin", "T07", "--key", first.public)
    assert again.returncode == 0 and "already enrolled" in again.stdout

    # The key is lost: one admin asks, the same admin cannot confirm, a second one does.
    asked = enrol(env, "admin", "T07", "--key", second.public)
    assert asked.returncode == 0 and "takes a second floor admin" in asked.stdout, asked.stdout
    keys = env.psql("SELECT fingerprint, status FROM table_keys ORDER BY id")
    assert keys == [(first.fingerprint, "active")]
    twice = enrol(env, "admin", "T07", "--key", second.public)
    assert twice.returncode == 3 and "second, other floor admin" in twice.stderr
    confirmed = enrol(env, second_admin(env), "T07", "--key", second.public)
    assert confirmed.returncode == 0, confirmed.stderr
    assert "asked by admin.person, confirmed by admin.two" in confirmed.stdout
    keys = env.psql(
        "SELECT fingerprint, status, via, added_by, approved_by, from_seq FROM table_keys "
        "ORDER BY id"
    )
    assert keys == [
        (first.fingerprint, "revoked", "enrol", "admin.person", None, 1),
        (second.fingerprint, "active", "re-enrol", "admin.person", "admin.two", 1),
    ]
    # The old key can never come back.
    old = enrol(env, "admin", "T07", "--key", first.public)
    assert old.returncode == 3 and "revoked" in old.stderr

    actions = env.psql("SELECT actor, action, target, outcome FROM floor_actions ORDER BY id")
    assert actions == [
        ("admin.person", "enrol", "T07", "done"),
        ("pit.person", "enrol", "T08", "refused: role pit"),
        ("admin.person", "enrol", "X';DROP", "refused: not a table id"),
        ("admin.person", "enrol", "T07", "done: already enrolled with this key"),
        ("admin.person", "re-enrol", "T07", "requested: a second admin must confirm"),
        ("admin.person", "re-enrol", "T07", "refused: the same admin twice"),
        ("admin.two", "re-enrol", "T07", "done: asked by admin.person"),
        ("admin.person", "re-enrol", "T07", "refused: key revoked"),
    ]

    listed = subprocess.run(
        [sys.executable, "-m", "daemon", "floor", "tables", "--config", str(env.config)],
        check=False, capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0 and '"table": "T07"' in listed.stdout, listed.stderr


def floor_cmd(env: FloorEnv, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", "floor", *args, "--config", str(env.config)],
        check=False, capture_output=True, text=True, cwd=REPO, timeout=60,
        env={**os.environ, "TABLED_TOKEN": env.tokens.get(token, token)},
    )  # fmt: skip


def test_replacing_a_broker_key_takes_two_admins(env: FloorEnv, tmp_path: Path) -> None:
    first, second = (make_seed(tmp_path / f"{n}.nk", "creds")[0] for n in ("one", "two"))
    assert enrol(env, "admin", "T07", "--key", TableKey.generate().public).returncode == 0
    # The first broker key of an enrolled table: one admin, as for its enrolment.
    done = floor_cmd(env, "admin", "broker-key", "T07", "--nkey", first)
    assert done.returncode == 0, done.stderr
    assert env.psql("SELECT nkey FROM broker_keys") == [(first,)]

    # Replacing it would let whoever holds the new key write as T07: one admin only asks.
    asked = floor_cmd(env, "admin", "broker-key", "T07", "--nkey", second)
    assert asked.returncode == 0, asked.stderr
    assert "takes a second floor admin" in asked.stdout and "within 24 hours" in asked.stdout
    assert env.psql("SELECT nkey FROM broker_keys") == [(first,)]
    twice = floor_cmd(env, "admin", "broker-key", "T07", "--nkey", second)
    assert twice.returncode == 3 and "second, other floor admin" in twice.stderr
    assert env.psql("SELECT nkey FROM broker_keys") == [(first,)]
    confirmed = floor_cmd(env, second_admin(env), "broker-key", "T07", "--nkey", second)
    assert confirmed.returncode == 0, confirmed.stderr
    assert "asked by admin.person, confirmed by admin.two" in confirmed.stdout
    assert env.psql("SELECT nkey, added_by FROM broker_keys") == [
        (second, "admin.person+admin.two")
    ]
    assert env.psql("SELECT count(*) FROM broker_key_requests") == [(0,)]
    actions = env.psql(
        "SELECT actor, outcome, note FROM floor_actions WHERE action = 'broker-key' ORDER BY id"
    )
    assert actions == [
        ("admin.person", "done", f"nkey {first[:12]}"),
        ("admin.person", "requested: a second admin must confirm", f"nkey {second[:12]}"),
        ("admin.person", "refused: the same admin twice", f"nkey {second[:12]}"),
        ("admin.two", f"done: asked by admin.person, replaced {first[:12]}", f"nkey {second[:12]}"),
    ]


def test_a_request_not_confirmed_within_a_day_expires(env: FloorEnv, tmp_path: Path) -> None:
    key, lost = TableKey.generate(), TableKey.generate()
    nkey, other = (make_seed(tmp_path / f"{n}.nk", "creds")[0] for n in ("one", "two"))
    assert enrol(env, "admin", "T07", "--key", key.public).returncode == 0
    assert floor_cmd(env, "admin", "broker-key", "T07", "--nkey", nkey).returncode == 0
    assert "takes a second" in enrol(env, "admin", "T07", "--key", lost.public).stdout
    assert "takes a second" in floor_cmd(env, "admin", "broker-key", "T07", "--nkey", other).stdout
    # A day and an hour later (the asks moved back in time), a second admin's run is a new ask.
    env.psql("UPDATE enrol_requests SET requested_at = now() - interval '25 hours' RETURNING 1")
    env.psql(
        "UPDATE broker_key_requests SET requested_at = now() - interval '25 hours' RETURNING 1"
    )
    two = second_admin(env)
    late = enrol(env, two, "T07", "--key", lost.public)
    assert late.returncode == 0 and "takes a second floor admin" in late.stdout, late.stdout
    assert env.psql("SELECT fingerprint, status FROM table_keys") == [(key.fingerprint, "active")]
    expired = env.psql(
        "SELECT actor, role, action, target, outcome, note FROM floor_actions "
        "WHERE outcome LIKE 'expired%%' ORDER BY id"
    )
    assert [row[:4] for row in expired] == [
        ("floor", "floor", "re-enrol", "T07"),
        ("floor", "floor", "broker-key", "T07"),
    ]
    assert all(
        "asked by admin.person at " in row[4] and "not confirmed within 24 h" in row[4]
        for row in expired
    )
    assert [row[5] for row in expired] == [f"key {lost.fingerprint}", f"nkey {other[:12]}"]
    late_key = floor_cmd(env, two, "broker-key", "T07", "--nkey", other)
    assert late_key.returncode == 0 and "takes a second" in late_key.stdout, late_key.stderr
    assert env.psql("SELECT nkey FROM broker_keys") == [(nkey,)]
    # The new asks are admin.two's: the first admin now confirms them, in time.
    done = enrol(env, "admin", "T07", "--key", lost.public)
    assert done.returncode == 0 and "asked by admin.two, confirmed by admin.person" in done.stdout
    done = floor_cmd(env, "admin", "broker-key", "T07", "--nkey", other)
    assert done.returncode == 0 and "asked by admin.two" in done.stdout, done.stderr
