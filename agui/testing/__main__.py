"""``python -m agui.testing URL [options]``: the same as ``board-watch check URL``."""

from __future__ import annotations

import sys

from agui._cli.main import main

if __name__ == "__main__":
    sys.exit(main(["check", *sys.argv[1:]]))
