"""``python -m agui.cli ...`` = ``board-watch ...``."""

import sys

from agui.cli.main import main

sys.exit(main())
