"""An nkey: how a table (and the floor) signs in to the broker.

An nkey is an Ed25519 key pair in NATS's encoding: the seed (``SU...``, secret, kept in the file
`[feed] creds` names, mode 0600) and the public key (``U...``, given to the floor and written into
the broker's config by `tabled floor broker-config`). The broker sends a nonce at each connection
and the client signs it, so the seed never crosses the network. It is not the table's journal
signing key: one key, one purpose (a broker that chose its nonce must not obtain a signature over
bytes the floor would take as a signed head).

`tabled feed nkey --config T.toml` makes the table's (once; then it shows its public key).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import nkeys  # type: ignore[import-untyped]  # nats-py[nkeys]: NATS's own encoding, no types

from daemon.shipper.config import secret_problem


class NkeyError(ValueError):
    """The seed file cannot be made or read; the message says which and why, in one line."""


def public_key(seed: str) -> str:
    """The public key (U...) of an nkey user seed (SU...)."""
    try:
        pair = nkeys.from_seed(seed.strip().encode())
        return str(pair.public_key.decode())
    except Exception as exc:  # nkeys raises its own errors and binascii's
        raise NkeyError(f"not an nkey seed ({type(exc).__name__})") from None


def read_public_key(path: Path, key: str) -> str:
    """The public key of the seed in `path`, refused if group or others may read the file."""
    problem = secret_problem(path, key)
    if problem:
        raise NkeyError(problem)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise NkeyError(f"{key}: {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise NkeyError(f"{key}: {path}: cannot read it: {exc}") from None
    try:
        return public_key(text)
    except NkeyError as exc:
        raise NkeyError(f"{key}: {path}: {exc}") from None


def make_seed(path: Path, key: str) -> tuple[str, bool]:
    """The public key of the seed at `path`, made first (mode 0600, never overwritten) if there
    is none; True when it was made now."""
    if path.exists():
        return read_public_key(path, key), False
    seed = nkeys.encode_seed(secrets.token_bytes(32), nkeys.PREFIX_BYTE_USER)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise NkeyError(f"{key}: {path}: cannot create it: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(bytes(seed) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    return public_key(bytes(seed).decode()), True
