"""API tokens: one per person, stored hashed in a TOML file (`[api] tokens_file`).

    [[token]]
    actor = "chan.tai.man"      # journaled as the actor of everything done with this token
    role = "dealer"             # dealer | supervisor | surveillance | admin | trainer (the table's)
                                # pit | surveillance | audit | admin (the floor's)
    hash = "sha256:9f86d0..."   # printed by `tabled token`; the token itself is never stored
    # disabled = true           # keeps the entry for the record but refuses the token

Tokens are 256-bit random strings made by `tabled token`, so a plain SHA-256 is enough to make the
file useless to whoever reads it: a slow password hash only protects guessable secrets, and would
put a key-derivation delay in front of every request the dealer's touch screen makes. The file is
re-read when it changes, so adding or disabling a person needs no restart.

The file must be private to the daemon's user (mode 0600): whoever can read it learns who holds
which role, and whoever can write it can give themselves one. A file that group or others may
read or write is refused, at start and at every reload, with the `chmod` that fixes it.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import re
import secrets
import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from daemon.contract.facade import ROLES
from daemon.tomltext import TomlRefused, loads_toml

log = structlog.get_logger("tabled.api")

HASH_PREFIX = "sha256:"
TOKEN_BYTES = 32
FLOOR_ROLES = ("pit", "surveillance", "audit", "admin")  # `tabled floor`'s readers
ALL_ROLES = tuple(dict.fromkeys((*ROLES, *FLOOR_ROLES)))
_ACTOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class TokenFileError(ValueError):
    """The tokens file is malformed or not private; the message names the entry and the key,
    or the mode and the command that fixes it."""


def mode_problem(path: Path, mode: int) -> str | None:
    """Why a tokens file with this `st_mode` must not be used; None when it is private."""
    if mode & 0o077 == 0:
        return None
    return (
        f"{path}: mode {mode & 0o777:04o} lets group or others read or write the tokens file; "
        f"it must be private to the daemon's user: chmod 600 {path}"
    )


def check_tokens_file(path: Path | None) -> str | None:
    """What stops the tokens file being used at start (its mode, its content), in words; None
    when it is usable or absent (a missing file is reported by `TokenStore`, not refused: the
    first `tabled token --append` creates it)."""
    if path is None:
        return None
    try:
        problem = mode_problem(path, path.stat().st_mode)
        if problem:
            return problem
        parse_tokens(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        return None
    except (TokenFileError, OSError, UnicodeDecodeError) as exc:
        return str(exc)
    return None


def missing_tokens_notice(path: Path | None) -> str | None:
    """What to say when the API serves without a tokens file: nobody can sign in yet, and the
    command that makes the file. None when the file exists (its problems are `check_tokens_file`'s).
    """
    if path is None:
        return (
            "no tokens file is configured, so nobody can sign in: add tokens_file = "
            '"var/tokens.toml" under [api] in the config, then make a token with '
            "`tabled token NAME ROLE --append var/tokens.toml`"
        )
    if path.exists():
        return None
    return (
        f"the tokens file {path} does not exist yet, so nobody can sign in until it does; "
        f"`tabled token NAME ROLE --append {path}` creates it (mode 0600) with a first token, "
        "and the running table reads it without a restart"
    )


@dataclass(frozen=True)
class Principal:
    """Who is calling: the person (journaled as actor) and their role."""

    actor: str
    role: str


def hash_token(token: str) -> str:
    return HASH_PREFIX + hashlib.sha256(token.encode("utf-8")).hexdigest()


def fingerprint(token: str) -> str:
    """A short, non-reversible tag for journaling a rejected token without revealing it."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:12]


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def parse_tokens(
    text: str, source: str = "<tokens>", roles: Collection[str] = ROLES
) -> dict[str, Principal]:
    """Map each enabled entry's hash to its principal. Refuses duplicates and unknown roles;
    an entry with a known role that is not one of `roles` (a floor role in a table's file, or
    the reverse) is skipped, so one file can serve a table and the floor."""
    try:
        data = loads_toml(text)
    except TomlRefused as exc:
        raise TokenFileError(f"{source}: {exc}") from None
    unknown = set(data) - {"token"}
    if unknown:
        raise TokenFileError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
    entries = data.get("token", [])
    if not isinstance(entries, list):
        raise TokenFileError(f"{source}: `token` must be an array of tables ([[token]])")
    out: dict[str, Principal] = {}
    for i, entry in enumerate(entries):
        where = f"{source}: token[{i}]"
        if not isinstance(entry, dict):
            raise TokenFileError(f"{where}: expected a table")
        extra = set(entry) - {"actor", "role", "hash", "disabled"}
        if extra:
            raise TokenFileError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        actor, role, digest = entry.get("actor"), entry.get("role"), entry.get("hash")
        if not isinstance(actor, str) or not _ACTOR.match(actor):
            raise TokenFileError(f"{where}.actor: expected a name like 'chan.tai.man'")
        if role not in ALL_ROLES:
            raise TokenFileError(f"{where}.role: {role!r} is not one of {', '.join(ALL_ROLES)}")
        if (
            not isinstance(digest, str)
            or not digest.startswith(HASH_PREFIX)
            or not re.fullmatch(r"[0-9a-f]{64}", digest[len(HASH_PREFIX) :])
        ):
            raise TokenFileError(f"{where}.hash: expected 'sha256:' and 64 hex digits")
        disabled = entry.get("disabled", False)
        if not isinstance(disabled, bool):
            raise TokenFileError(f"{where}.disabled: expected true or false")
        if digest in out:
            raise TokenFileError(f"{where}.hash: the same token is already given to another entry")
        if not disabled and role in roles:
            out[digest] = Principal(actor=actor, role=role)
    return out


class TokenStore:
    """The tokens file, re-read when its size or mtime changes.

    A file that becomes malformed keeps the last good set (and the error is reported through
    `last_error`), so a typo by an admin does not lock every dealer out mid-round.
    """

    def __init__(self, path: Path | None, roles: Collection[str] = ROLES) -> None:
        self.path = path
        self.roles = roles
        self._stamp: tuple[int, int, int] | None = None
        self._by_hash: dict[str, Principal] = {}
        self.last_error: str | None = None
        self._reload()

    def _reload(self) -> None:
        if self.path is None:
            if self.last_error is None:
                self.last_error = "no tokens file configured ([api] tokens_file)"
                log.warning("api.no_tokens_file", problem=missing_tokens_notice(None))
            return
        try:
            st = self.path.stat()
        except FileNotFoundError:
            if self._stamp is not None:
                log.error("api.tokens_unreadable", problem=f"{self.path}: no such tokens file")
            elif self.last_error is None:  # not made yet: a warning that says how
                log.warning("api.no_tokens_file", problem=missing_tokens_notice(self.path))
            self._stamp, self._by_hash = None, {}
            self.last_error = f"{self.path}: no such tokens file"
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_mode)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            problem = mode_problem(self.path, st.st_mode)
            if problem:
                raise TokenFileError(problem)
            self._by_hash = parse_tokens(
                self.path.read_text(encoding="utf-8"), str(self.path), self.roles
            )
            self.last_error = None
            log.info("api.tokens_loaded", path=str(self.path), people=len(self._by_hash))
        except (TokenFileError, OSError, UnicodeDecodeError) as exc:
            self.last_error = str(exc)
            log.error("api.tokens_unreadable", problem=self.last_error, kept=len(self._by_hash))

    def lookup(self, token: str) -> Principal | None:
        self._reload()
        return self.holder(hash_token(token))

    def holder(self, digest: str) -> Principal | None:
        """Who holds the token of this hash, as the file said when it was last read (`reload`);
        for a check repeated many times a second (each push-feed message)."""
        for known, principal in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                return principal
        return None

    def reload(self) -> None:
        """Read the tokens file again if it changed since it was last read."""
        self._reload()

    async def refresh(self) -> None:
        """Before a token is refused: the file as it is now (`lookup` already looked). A
        token given a moment ago (`tabled token --append`) is known at its first use."""
        self._reload()

    def entries(self) -> dict[str, Principal]:
        """Each enabled token's hash and its holder, as last read: what the table's process
        sends its API process (`SentTokens`)."""
        return dict(self._by_hash)


class SentTokens(TokenStore):
    """The tokens as the API process holds them when it may not read the tokens file (it runs
    as a user of its own, daemon.api.user): the hashes and their holders, sent by the table's
    process at the start and whenever the file changes (`replace`)."""

    def __init__(
        self,
        entries: dict[str, Principal],
        roles: Collection[str] = ROLES,
        ask: Callable[[], Awaitable[dict[str, Principal] | None]] | None = None,
    ) -> None:
        self.path, self.roles = None, roles
        self._stamp = None
        self._by_hash = dict(entries)
        self.last_error = None
        self._ask = ask

    async def refresh(self) -> None:
        """Ask the table's process to look at the tokens file now: it polls it every half
        second, and a token given just before its first use would be refused meanwhile."""
        if self._ask is not None:
            entries = await self._ask()
            if entries is not None:
                self.replace(entries)

    def _reload(self) -> None:
        """The table's process sends the changes."""

    def replace(self, entries: dict[str, Principal]) -> None:
        self._by_hash = dict(entries)


def token_entry(actor: str, role: str, token: str) -> str:
    """The TOML entry an admin appends to the tokens file for `token`."""
    return f'[[token]]\nactor = "{actor}"\nrole = "{role}"\nhash = "{hash_token(token)}"\n'


def main(argv: Sequence[str] | None = None) -> int:
    """`tabled token ACTOR ROLE [--append FILE]`: make a token for a person."""
    parser = argparse.ArgumentParser(
        prog="tabled token",
        description="Make an API token for one person. The token is printed once (give it to "
        "the person); only its hash goes into the tokens file.",
    )
    parser.add_argument("actor", help="the person, as journaled (e.g. chan.tai.man)")
    parser.add_argument("role", choices=ALL_ROLES)
    parser.add_argument(
        "--append", type=Path, metavar="FILE", help="append the hashed entry to this tokens file"
    )
    args = parser.parse_args(argv)
    if not _ACTOR.match(args.actor):
        parser.error("actor: letters, digits and . _ @ - only, at most 64 characters")
    token = new_token()
    entry = token_entry(args.actor, args.role, token)
    if args.append is not None:
        existing = args.append.read_text(encoding="utf-8") if args.append.exists() else ""
        try:
            if args.append.exists():
                problem = mode_problem(args.append, args.append.stat().st_mode)
                if problem:
                    raise TokenFileError(problem)
            parse_tokens(existing + "\n" + entry, str(args.append), ALL_ROLES)
        except TokenFileError as exc:
            print(f"tabled token: {exc}", file=sys.stderr)
            return 1
        try:
            args.append.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(args.append, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(("\n" if existing and not existing.endswith("\n\n") else "") + entry)
        except OSError as exc:
            print(f"tabled token: cannot write {args.append}: {exc.strerror}", file=sys.stderr)
            return 1
        # Only the token on stdout, so that TOKEN=$(tabled token ... --append FILE) is the token.
        print(
            f"token for {args.actor} ({args.role}) appended to {args.append}; "
            "give it to them, it is not stored:",
            file=sys.stderr,
        )
        print(token)
    else:
        print(f"# token for {args.actor} ({args.role}), give it to them; it is not stored:")
        print(f"# {token}")
        print(entry, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
