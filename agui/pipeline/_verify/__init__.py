"""The AG-UI ordering verifier and its stable rule codes.

``Verifier`` (see :mod:`agui.pipeline._verify.verifier`) checks normalized events one at
a time; :mod:`agui._rules` (the home of the codes, below both layers) lists every rule code
it (and the chunk normalizer) can report. Modes are applied by the caller (``agui.pipeline._pipeline``):
``strict`` fails the run on the first violation, ``tolerant`` reports the
violation, drops the offending event and continues, ``off`` skips the verifier.
"""

from __future__ import annotations

from agui import _rules as rules
from agui._rules import RULES
from agui.pipeline._verify.verifier import Verifier

__all__ = ["RULES", "Verifier", "rules"]
