"""`tabled keys init|show|rotate --config T.toml`: the table's Ed25519 signing key.

- `init` makes the key (PKCS#8 PEM, mode 0600 from its first byte) at `[table] key_file`, or
  `table.key` beside the tokens file; it never replaces a key.
- `show` prints the table, the file, the fingerprint to read aloud at enrolment, and the public
  key alone on the last line (`tabled floor enrol T07 --key "$(tabled keys show ... | tail -1)"`).
- `rotate` (the table stopped: it takes the journal's lock) makes a new key and journals
  `table.key_rotated` with the new public key signed by the old one, so the floor takes the new
  key for the lines after it without an admin; the old file is kept as `<key>.retired-<seq>`.
  On a running table it is refused (exit 3, one line saying to stop the table first), before
  anything is made or written: the running daemon signs with the key it loaded at start.

A key file that group or others may read is refused, as the tokens file is. docs/security.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from daemon.config import ConfigError, TableConfig, load_config
from daemon.journal.provenance import KEY_ROTATED, KeyFileError, TableKey, load_key, write_key


def _config(path: str | None, journal: Path | None) -> TableConfig:
    config = load_config(path)
    if journal is not None:
        config = replace(config, journal=replace(config.journal, dir=journal))
    return config


def _init(config: TableConfig) -> int:
    path = config.signing_key_path()
    if path.exists() or path.is_symlink():
        print(
            f"tabled keys init: {path} exists; a key is never replaced (`tabled keys rotate` "
            "makes the next one, announced by this one)",
            file=sys.stderr,
        )
        return 1
    key = TableKey.generate()
    try:
        write_key(path, key)
    except OSError as exc:
        print(f"tabled keys init: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"table {config.table_id}: signing key written to {path} (mode 0600)")
    print(f"fingerprint {key.fingerprint}")
    print(key.public)
    return 0


def _show(config: TableConfig) -> int:
    try:
        key = load_key(config.signing_key_path())
    except KeyFileError as exc:
        print(f"tabled keys show: {exc}; `tabled keys init` makes one", file=sys.stderr)
        return 1
    print(f"table {config.table_id}")
    print(f"key file {key.path}")
    print(f"fingerprint {key.fingerprint}")
    print(key.public)
    return 0


EXIT_RUNNING = 3  # `rotate` on a running table: refused, nothing changed


def _running(config: TableConfig, where: str) -> int:
    """The refusal of a rotation while the table runs, in one line that says what to do."""
    print(
        f"tabled keys rotate: table {config.table_id} is running (its journal "
        f"{config.journal.dir} is open in its daemon): the key is rotated with the table "
        "stopped, so that no line is signed by a key the table is replacing; stop it "
        f"(`systemctl stop tabled`, or Ctrl-C on `tabled run`), run `tabled keys rotate{where}` "
        "again, then start it; nothing was changed",
        file=sys.stderr,
    )
    return EXIT_RUNNING


def _rotate(config: TableConfig, where: str = "") -> int:
    from daemon.journal import Journal, JournalError, JournalLocked  # noqa: PLC0415
    from daemon.shipper.cursor import journal_writer_running  # noqa: PLC0415

    path = config.signing_key_path()
    try:
        old = load_key(path)
    except KeyFileError as exc:
        print(f"tabled keys rotate: {exc}", file=sys.stderr)
        return 1
    if config.journal.dir.is_dir() and journal_writer_running(config.journal.dir):
        return _running(config, where)
    new = TableKey.generate()
    staged = path.with_name(path.name + ".next")
    if staged.exists():
        staged.unlink()  # a rotation that stopped before its line was journaled
    try:
        write_key(staged, new)
        journal = Journal.open(config.journal, config.table_id)
    except JournalLocked:  # it started meanwhile
        staged.unlink(missing_ok=True)
        return _running(config, where)
    except (OSError, JournalError) as exc:
        print(f"tabled keys rotate: {exc}", file=sys.stderr)
        staged.unlink(missing_ok=True)
        return 1
    try:
        record = journal.append(
            KEY_ROTATED, actor="system", payload=old.announce(config.table_id, new), commit=True
        )
    finally:
        journal.close()
    retired = path.with_name(f"{path.name}.retired-{record.seq}")
    os.replace(path, retired)
    os.replace(staged, path)
    print(f"table {config.table_id}: key rotated at seq {record.seq} (old key kept as {retired})")
    print(f"fingerprint {new.fingerprint}")
    print(new.public)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled keys",
        description="The table's Ed25519 signing key: init makes it, show prints its "
        "fingerprint and public key (last line), rotate journals the next key signed by this "
        "one (with the table stopped).",
    )
    parser.add_argument("action", choices=("init", "show", "rotate"))
    parser.add_argument("--config", help="the table's config (default: the embedded one)")
    parser.add_argument("--journal", type=Path, help="rotate: the journal folder, if not [journal]")
    args = parser.parse_args(argv)
    try:
        config = _config(args.config, args.journal)
    except ConfigError as exc:
        print(f"tabled keys: {exc}", file=sys.stderr)
        return 2
    if args.action == "init":
        return _init(config)
    if args.action == "show":
        return _show(config)
    where = "".join(
        f" {flag} {value}"
        for flag, value in (("--config", args.config), ("--journal", args.journal))
        if value
    )
    return _rotate(config, where)


if __name__ == "__main__":
    raise SystemExit(main())
