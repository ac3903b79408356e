"""``python -m agui.testing URL [options]``: the same command as ``board-watch check URL``."""

from __future__ import annotations

import sys

from agui.testing._command import main

if __name__ == "__main__":
    sys.exit(main())
