"""The mutant's text, put in place of its module's file at import, in this process and in every
Python process it starts.

`TABLED_MUTANT` names a JSON file (``{"module": ..., "file": ..., "source": ...}``); `install`
puts a finder first on `sys.meta_path` that loads that module from the mutant's text instead of
its file. The proof (`daemon.trace.prove`) sets the variable and puts a folder holding a
``sitecustomize.py`` that calls `install` on ``PYTHONPATH``, so a daemon a test starts as a
process runs the mutant too. Nothing is written to the tree.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, SourceFileLoader
from importlib.util import spec_from_file_location
from pathlib import Path
from types import CodeType, ModuleType

VARIABLE = "TABLED_MUTANT"
SITECUSTOMIZE = (
    "import os\n"
    f"if os.environ.get({VARIABLE!r}):\n"
    "    from daemon.trace.hook import install\n"
    "    install()\n"
)


class _Loader(SourceFileLoader):
    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self.source = source

    def get_source(self, fullname: str) -> str:
        return self.source

    def get_code(self, fullname: str) -> CodeType:
        # Compiled from the text, never from a cached .pyc of the file.
        return compile(self.source, self.path, "exec", dont_inherit=True)


class _Finder:
    def __init__(self, module: str, file: str, source: str) -> None:
        self.module, self.file, self.source = module, file, source

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != self.module:
            return None
        loader = _Loader(fullname, self.file, self.source)
        return spec_from_file_location(fullname, self.file, loader=loader)


def install(spec: str | None = None) -> None:
    """Load the mutant `spec` (a JSON file; by default `TABLED_MUTANT`'s) in its module's place."""
    spec = spec or os.environ.get(VARIABLE)
    if not spec:
        return
    data = json.loads(Path(spec).read_text(encoding="utf-8"))
    if data["module"] in sys.modules:
        raise RuntimeError(f"{data['module']} is imported already; the mutant cannot replace it")
    sys.meta_path.insert(0, _Finder(data["module"], data["file"], data["source"]))
