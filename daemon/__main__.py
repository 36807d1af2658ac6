from __future__ import annotations

from daemon.cli import main

raise SystemExit(main())
