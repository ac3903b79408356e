"""What a seeded fuzz campaign did, for the campaign tests and ``tools/fuzz.py``.

A campaign raises AssertionError (naming its seed and example) on the first input that
breaks an invariant; when it returns, its :class:`Tally` says how many inputs it tried and
how the code under test took them: accepted (decoded, applied, answered 2xx) or refused (a
typed error, a skipped operation, a 4xx). A campaign whose inputs are all accepted, or all
refused, no longer tests both sides of the code: the tests assert each side occurred."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Tally:
    """Counts of one campaign: ``tried == accepted + refused``; ``crashes``: inputs that
    reached a last-defence handler (an exception the code caught only to survive it)."""

    tried: int = 0
    accepted: int = 0
    refused: int = 0
    crashes: int = 0

    def count(self, accepted: bool) -> None:
        """One more input tried, accepted or refused."""
        self.tried += 1
        if accepted:
            self.accepted += 1
        else:
            self.refused += 1

    def assert_exercised(self, tried: int) -> None:
        """All ``tried`` inputs ran, none crashed, and some were accepted and some refused."""
        assert self.tried == tried == self.accepted + self.refused, self
        assert self.crashes == 0, self
        assert self.accepted > 0 and self.refused > 0, self
