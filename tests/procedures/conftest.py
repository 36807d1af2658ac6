from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The round drivers beside this file are imported by name from every test module here.
sys.path.insert(0, str(Path(__file__).parent))

from procedure_drive import Input, Prefixes


@pytest.fixture(scope="session")
def prefixes() -> dict[str, dict[str, list[Input]]]:
    """For each game and phase, a recorded legal input prefix that reaches it."""
    return Prefixes()
