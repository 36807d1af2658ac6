"""A table's identity: its Ed25519 key, the signed heads of its chain, and their check.

The journal's lines are chained (`format.py`: each line's ``prev`` is the SHA-256 of the line
before), so one signature over a line's hash vouches for that line and, through the ``prev``
links, for every line before it. The table therefore signs **heads** of its chain, not lines: a
head says "table T's line S has SHA-256 H", and the floor, holding lines S, S-1, ... that link,
holds them all proven. Why heads and not a signature a line: on the development machine an
Ed25519 signature costs ~60 µs of CPU and a check ~155 µs, so a signature a line would add
~8 ms to a Thirteen round of ~140 lines (17-23 ms of CPU) and more than the floor's whole ingest
(~47 µs a line); a head a second costs neither a measurable share (docs/security.md).

The exact bytes signed (ASCII, each field followed by one ``\\n``):

    head:   b"tabled head v1\\n" + table + b"\\n" + seq (decimal) + b"\\n" + hash (64 hex) + b"\\n"
    rotate: b"tabled key v1\\n" + table + b"\\n" + old public key + b"\\n" + new public key + b"\\n"

A public key is written ``ed25519:`` then the 32 raw bytes in standard base64 (44 characters);
its **fingerprint**, read aloud at enrolment, is the first 8 bytes of the SHA-256 of those 32
bytes in hex, in four groups (``3f2a-91c0-77de-0b14``). A signature is the 64 raw bytes in
standard base64.

A head travels as one message on ``<prefix>.<table>.head`` (a subject no journal line has: an
event name has two parts or more), its body one JSON line::

    {"table":"T07","seq":1234,"hash":"<64 hex>","key":"<fingerprint>","sig":"<base64>"}

The key file is PKCS#8 PEM, unencrypted, mode 0600 (refused otherwise, like the tokens file):
whoever reads it can write as the table.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_PREFIX = "ed25519:"
HEAD_SUBJECT = "head"  # <prefix>.<table>.head
CONFLICT_SUBJECT = "conflict"  # <prefix>.<table>.conflict: the shipper's own line, after a forgery
KEY_ROTATED = "table.key_rotated"  # the journal event that announces a new key
HEX64 = re.compile(r"^[0-9a-f]{64}$")
MAX_HEAD_BYTES = 1024


class KeyFileError(ValueError):
    """The key file is missing, unreadable, not private or not an Ed25519 key; the message
    names the file and the command that fixes it."""


class BadHead(ValueError):
    """A head message that is not one, or whose signature does not verify."""


def head_bytes(table: str, seq: int, digest: str) -> bytes:
    """The bytes a head's signature is over."""
    return f"tabled head v1\n{table}\n{seq}\n{digest}\n".encode()


def rotation_bytes(table: str, old_public: str, new_public: str) -> bytes:
    """The bytes the old key signs to announce the new one."""
    return f"tabled key v1\n{table}\n{old_public}\n{new_public}\n".encode()


def public_text(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KEY_PREFIX + base64.b64encode(raw).decode()


def parse_public(text: str) -> Ed25519PublicKey:
    """A public key from its text (``ed25519:<base64>``); ValueError saying what is wrong."""
    text = text.strip()
    if not text.startswith(KEY_PREFIX):
        raise ValueError(f"a public key starts with {KEY_PREFIX!r} (as `tabled keys show` prints)")
    try:
        raw = base64.b64decode(text[len(KEY_PREFIX) :], validate=True)
    except binascii.Error:
        raise ValueError("the public key is not base64") from None
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key is 32 bytes, this one {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def fingerprint(public: str) -> str:
    """The short form of a public key (its text) to read aloud: ``3f2a-91c0-77de-0b14``."""
    raw = base64.b64decode(public[len(KEY_PREFIX) :])
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


@dataclass(frozen=True)
class TableKey:
    """A table's private key, with its public text and fingerprint."""

    private: Ed25519PrivateKey
    public: str
    fingerprint: str
    path: Path | None = None

    @classmethod
    def of(cls, private: Ed25519PrivateKey, path: Path | None = None) -> TableKey:
        public = public_text(private.public_key())
        return cls(private, public, fingerprint(public), path)

    @classmethod
    def generate(cls) -> TableKey:
        return cls.of(Ed25519PrivateKey.generate())

    def sign(self, data: bytes) -> str:
        return base64.b64encode(self.private.sign(data)).decode()

    def head(self, table: str, seq: int, digest: str) -> bytes:
        """The body of a head message for line `seq` of `table`, whose SHA-256 is `digest`."""
        sig = self.sign(head_bytes(table, seq, digest))
        return (
            f'{{"table":"{table}","seq":{seq},"hash":"{digest}",'
            f'"key":"{self.fingerprint}","sig":"{sig}"}}\n'
        ).encode()

    def announce(self, table: str, new: TableKey) -> dict[str, str]:
        """The payload of a `table.key_rotated` line: the new key, signed by this one."""
        return {
            "old_key": self.public,
            "new_key": new.public,
            "new_fingerprint": new.fingerprint,
            "signature": self.sign(rotation_bytes(table, self.public, new.public)),
        }

    def pem(self) -> bytes:
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def key_problem(path: Path, mode: int) -> str | None:
    """Why a key file with this `st_mode` must not be used; None when it is private."""
    if mode & 0o077 == 0:
        return None
    return (
        f"{path}: mode {mode & 0o777:04o} lets group or others read or write the table's signing "
        f"key; it must be private to the daemon's user: chmod 600 {path}"
    )


def load_key(path: Path) -> TableKey:
    """The table's key from its file; KeyFileError naming the file and the fix."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise KeyFileError(f"{path}: no signing key") from None
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the signing key: {exc.strerror}") from None
    problem = key_problem(path, st.st_mode)
    if problem:
        raise KeyFileError(problem)
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError, OSError) as exc:
        raise KeyFileError(f"{path}: not a PEM private key ({exc})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key")
    return TableKey.of(private, path)


def write_key(path: Path, key: TableKey) -> None:
    """Create the key file, mode 0600 from its first byte; never replaces a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, key.pem())
        os.fsync(fd)
    finally:
        os.close(fd)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@dataclass(frozen=True)
class Head:
    """A head as received: table, seq, the line's SHA-256, the key's fingerprint, signature."""

    table: str
    seq: int
    hash: str
    key: str
    sig: bytes


def parse_head(body: bytes) -> Head:
    """A head message's fields; BadHead if it is not one."""
    if len(body) > MAX_HEAD_BYTES:
        raise BadHead(f"a head of {len(body)} bytes")
    try:
        obj: Any = json.loads(body)
    except (ValueError, RecursionError):
        raise BadHead("not JSON") from None
    if not isinstance(obj, dict) or set(obj) != {"table", "seq", "hash", "key", "sig"}:
        raise BadHead("not a head (keys table, seq, hash, key, sig)")
    table, seq, digest, key, sig = obj["table"], obj["seq"], obj["hash"], obj["key"], obj["sig"]
    if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1):
        raise BadHead("seq is not a positive integer")
    if not (isinstance(digest, str) and HEX64.match(digest)):
        raise BadHead("hash is not a SHA-256 hex digest")
    if not (isinstance(table, str) and isinstance(key, str) and isinstance(sig, str)):
        raise BadHead("table, key and sig must be strings")
    try:
        raw = base64.b64decode(sig, validate=True)
    except binascii.Error:
        raise BadHead("sig is not base64") from None
    if len(raw) != 64:
        raise BadHead("sig is not an Ed25519 signature")
    return Head(table, seq, digest, key, raw)


def verify(public: Ed25519PublicKey, sig: bytes, data: bytes) -> bool:
    try:
        public.verify(sig, data)
    except InvalidSignature:
        return False
    return True


def verify_head(head: Head, public: Ed25519PublicKey) -> bool:
    return verify(public, head.sig, head_bytes(head.table, head.seq, head.hash))


def verify_rotation(table: str, payload: Any) -> str | None:
    """The new key's text if `payload` (a `table.key_rotated` line's) is signed by its old key;
    None otherwise."""
    if not isinstance(payload, Mapping):
        return None
    old, new, sig = payload.get("old_key"), payload.get("new_key"), payload.get("signature")
    if not (isinstance(old, str) and isinstance(new, str) and isinstance(sig, str)):
        return None
    try:
        old_key = parse_public(old)
        parse_public(new)
        raw = base64.b64decode(sig, validate=True)
    except (ValueError, binascii.Error):
        return None
    return new if verify(old_key, raw, rotation_bytes(table, old, new)) else None
