"""``python -m agui._cli ...`` = ``board-watch ...``."""

import sys

from agui._cli.main import main

sys.exit(main())
