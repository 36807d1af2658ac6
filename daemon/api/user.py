"""The API process's own user: what a taken-over API process cannot touch.

The API process faces the network; the table's process holds the journal, the tokens file and
the table's signing key. When `tabled run` starts as root, its API process (daemon.api.process)
runs as `[api] user` (default `tabled-api`), an unprivileged user with no supplementary groups,
and is given what it needs by the table's process instead of reading it itself:

- the journal's folder as a read-only descriptor (`/proc/self/fd/N`), which it reads older lines
  from; the folder and its files must not be writable by that user, and are shared with its group
  alone, read-only (the journal is otherwise the daemon's user's alone: daemon/journal/private.py);
- the people and roles of the tokens file (their hashes), sent over the channel and again when
  the file changes; the tokens file must not be readable by that user (mode 0600, not its own);
- the TLS certificate and key, as bytes (it serves TLS); the key file may stay root's alone.

The signing key file, beside the tokens file, is held by the table's process alone: it must not be
readable by that user either. What the user may reach is judged from each file's owner, group and
mode as the kernel does for that uid and its one group (the API process has no other group).

The journal's lines are shared with that user's group, so the user and its group must be its
own: a user that does not exist, is root's (uid or gid 0), is nobody/nogroup (65534, shared by
many services), or whose group has any other member (named in the group, or another user's
primary group) stops `tabled run` before the table starts, in one line that says how to make
one. When `tabled run` is not root it cannot change user: the API process runs as the daemon's
own user, as before, and `[api] user` is not used.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import daemon
from daemon.config import ApiConfig, TableConfig

NOBODY = 65534  # nobody and nogroup: shared by many services
DEDICATED = (
    "the API process's user needs a dedicated user and group, which no one else is in; create "
    "one with `useradd --system --user-group --no-create-home --shell /usr/sbin/nologin {user}`"
)


@dataclass(frozen=True)
class ApiUser:
    """Who the API process runs as: a user, its one group."""

    name: str
    uid: int
    gid: int


class ApiUserError(ValueError):
    """The API process's user cannot be used; the message says why and what to do, one line."""


def api_user(api: ApiConfig) -> ApiUser | None:
    """The user the API process runs as; None when `tabled run` is not root (it cannot change
    user, and the API process runs as its own)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(api.user)
    except KeyError:
        raise ApiUserError(
            f"[api] user {api.user!r} does not exist: the API process runs as its own "
            f"unprivileged user when tabled runs as root; create it with `useradd --system "
            f"--no-create-home --shell /usr/sbin/nologin {api.user}` or name another in [api] user"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise ApiUserError(
            f"[api] user {api.user!r} has uid {entry.pw_uid} and gid {entry.pw_gid}: the API "
            "process would keep root's rights; name an unprivileged user"
        )
    if NOBODY in (entry.pw_uid, entry.pw_gid):
        raise ApiUserError(
            f"[api] user {api.user!r} has uid {entry.pw_uid} and gid {entry.pw_gid} (nobody/"
            "nogroup, shared by many services), and the journal's lines are shared with its "
            f"group: {DEDICATED.format(user=api.user)}"
        )
    others = group_members(entry)
    if others:
        raise ApiUserError(
            f"[api] user {api.user!r}: its group {entry.pw_gid} has other members "
            f"({', '.join(others)}), and the journal's lines are shared with it: "
            f"{DEDICATED.format(user=api.user)}"
        )
    if setpriv() is None:
        raise ApiUserError(
            "setpriv (util-linux) is not installed: tabled runs its API process as [api] user "
            f"{api.user!r} with it when it runs as root"
        )
    return ApiUser(api.user, entry.pw_uid, entry.pw_gid)


def group_members(entry: pwd.struct_passwd) -> list[str]:
    """The users other than `entry` in its primary group: named in the group's entry, or
    another user's own group."""
    try:
        named = set(grp.getgrgid(entry.pw_gid).gr_mem)
    except KeyError:
        named = set()
    named |= {other.pw_name for other in pwd.getpwall() if other.pw_gid == entry.pw_gid}
    named.discard(entry.pw_name)
    return sorted(named)


def setpriv() -> str | None:
    """util-linux's setpriv, by its full path (PATH may not hold /usr/bin when root)."""
    return shutil.which("setpriv", path=os.environ.get("PATH", "") + ":/usr/bin:/bin:/usr/sbin")


def as_user(user: ApiUser | None) -> list[str]:
    """What a command is prefixed with to run as `user`: its uid and gid, no other group, no
    capability (none inherited, none it could gain: an empty bounding set) and no way to gain
    a privilege by exec (no_new_privs); nothing when there is no user to change to. setpriv, not
    uvloop's subprocess (which cannot change user), and not runuser (a PAM session, which the
    API process has no use for)."""
    if user is None:
        return []
    program = setpriv()
    if program is None:
        raise ApiUserError("setpriv (util-linux) is not installed")
    return [
        program,
        f"--reuid={user.uid}",
        f"--regid={user.gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def can(user: ApiUser, path: Path, bits: int) -> bool:
    """Whether `user` (with its one group) has the permission `bits` (4 read, 2 write, 1
    search) on `path` itself, by its owner, group and mode, as the kernel decides for it."""
    st = path.stat()
    if st.st_uid == user.uid:
        granted = (st.st_mode >> 6) & 7
    elif st.st_gid == user.gid:
        granted = (st.st_mode >> 3) & 7
    else:
        granted = st.st_mode & 7
    return granted & bits == bits


def secrets_problem(user: ApiUser | None, *files: Path | None) -> str | None:
    """Why one of `files` (the tokens file, the signing key) is readable by the API process's
    user, in one line; None when none is (or when there is no user to change to)."""
    if user is None:
        return None
    for file in files:
        if file is None or not file.exists():
            continue
        if can(user, file, 4):
            return (
                f"{file} is readable by [api] user {user.name!r} (the API process): it is the "
                f"table's process's alone; chown root {file} && chmod 600 {file}"
            )
    return None


def journal_problem(user: ApiUser | None, folder: Path) -> str | None:
    """Why the API process's user could write the journal's folder or one of its files, in one
    line; None when it cannot (or when there is no user to change to)."""
    if user is None:
        return None
    if can(user, folder, 2 | 1):
        return (
            f"the journal folder {folder} is writable by [api] user {user.name!r} (the API "
            f"process): chown root {folder} && chmod 711 {folder}"
        )
    for entry in folder.iterdir():
        if stat.S_ISREG(entry.lstat().st_mode) and can(user, entry, 2):
            return (
                f"the journal file {entry} is writable by [api] user {user.name!r} (the API "
                f"process): chown root {entry} && chmod 600 {entry}"
            )
    return None


def user_problem(config: TableConfig, journal: Path | None = None) -> str | None:
    """Why `tabled run --http` must not start its API process with this config, in one line:
    a user that cannot be used, a secret file it could read, a journal folder (`journal`, else
    the config's; if it exists yet) it could write, tabled's code it could not read. None when
    it may (or when tabled is not root)."""
    try:
        user = api_user(config.api)
    except ApiUserError as exc:
        return str(exc)
    folder = journal or config.journal.dir
    return (
        secrets_problem(user, *secret_files(config))
        or (journal_problem(user, folder) if folder.is_dir() else None)
        or code_problem(user)
    )


def code_problem(user: ApiUser | None) -> str | None:
    """Why the API process's user could not run tabled (its package, the packages it
    imports, each folder down to them searchable and the last one readable); None when it can.
    """
    if user is None:
        return None
    for folder in (Path(daemon.__file__).parent, Path(sysconfig.get_paths()["purelib"])):
        for step in (*reversed(folder.parents), folder):
            if not can(user, step, 1) or (step == folder and not can(user, step, 4)):
                return (
                    f"[api] user {user.name!r} (the API process) cannot reach tabled's code at "
                    f"{folder}: {step} is mode {step.stat().st_mode & 0o777:04o}; install tabled "
                    "where every user may read it (e.g. /opt), or chmod o+x the folders above it"
                )
    return None


def secret_files(config: TableConfig) -> tuple[Path | None, ...]:
    """The files the API process must not read: the tokens file, the table's signing key."""
    key = getattr(config, "signing_key_path", None)  # [table] key_file, beside the tokens file
    return (config.api.tokens_file, key() if key is not None else None)
