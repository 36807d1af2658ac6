from __future__ import annotations

import atexit
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.device_plugins import install_example

# CI runs on 2 cores beside nothing else; keep property tests thorough but bounded.
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# The browser tests wait for what a person would see; on a loaded 2-core machine a page can take
# longer than Playwright's 5 s to show it. A wait, not an assertion on time: it ends when seen.
try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass
else:
    expect.set_options(timeout=15_000)


def pytest_configure(config: pytest.Config) -> None:
    # The worked device plug-in (docs/devices.md), installed for the session as a package is:
    # the registry's kinds, which the device contract and fuzzing run over, include it.
    site = Path(tempfile.mkdtemp(prefix="tabled-plugins-"))
    atexit.register(shutil.rmtree, site, ignore_errors=True)
    install_example(site)
    # `tabled trace` reads these marks from the source (daemon/trace/marks.py).
    config.addinivalue_line(
        "markers",
        "article(regulation, *paragraphs): the test proves these articles, e.g. "
        '@pytest.mark.article("51/89/M", "2(a)"); see docs/traceability.md',
    )


API_USER = "tabled-api"  # `[api] user`'s default (daemon.config.ApiConfig)


def ensure_api_user() -> None:
    """As root, `tabled run --http` runs its API process as `tabled-api` and refuses to start
    without it (daemon.api.user): the tests, which run as root in CI, make it once, as an
    operator would (a system user with a group of its own, no home, no shell)."""
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam(API_USER)
        return
    except KeyError:
        pass
    useradd = shutil.which("useradd", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if useradd is None:
        raise pytest.UsageError(f"running as root, the tests need the user {API_USER}: no useradd")
    subprocess.run(
        [
            useradd,
            "--system",
            "--user-group",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            API_USER,
        ],  # its own group, no one else in it: the journal's lines are shared with it
        check=False,
        capture_output=True,
    )
    pwd.getpwnam(API_USER)  # made here, or by another test process at the same time


ensure_api_user()


def ensure_code_reachable() -> None:
    """As root, `tabled run --http` refuses to start an API process whose user cannot read
    tabled's code (daemon.api.user.code_problem): a clone under /root (mode 0700) is one. The
    tests grant that user what the refusal asks of an operator, search (x, never read) on the
    folders above the checkout and the venv, and say so once on stderr."""
    if os.geteuid() != 0:
        return
    import sysconfig  # noqa: PLC0415 - only as root

    from daemon.api.user import ApiUser, can  # noqa: PLC0415

    entry = pwd.getpwnam(API_USER)
    user = ApiUser(API_USER, entry.pw_uid, entry.pw_gid)
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "daemon", Path(sysconfig.get_paths()["purelib"]).resolve()):
        for step in reversed(folder.parents):
            if not can(user, step, 1):
                mode = step.stat().st_mode
                step.chmod(mode | 0o001)
                print(  # a change to the machine is said, not hidden
                    f"tests: chmod o+x {step} (was {mode & 0o777:04o}), so that {API_USER} "
                    "reaches tabled's code as the API process must",
                    file=sys.stderr,
                )


ensure_code_reachable()
