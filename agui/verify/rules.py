"""The rule codes, re-exported from :mod:`agui.rules` (their home, below both
the normalizer and the verifier): ``agui.verify.rules.X is agui.rules.X``."""

from __future__ import annotations

from agui import rules as _rules
from agui.rules import *  # noqa: F403 - a re-export of every rule code

__all__ = list(_rules.__all__)
