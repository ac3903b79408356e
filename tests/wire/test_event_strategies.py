"""The property-test strategies (tests/support/event_strategies.py) draw what the schema allows."""

from __future__ import annotations

from typing import Annotated

import msgspec
import msgspec.inspect as mi
from hypothesis import given, settings
from support.event_strategies import strategy


class Bounded(msgspec.Struct):
    ratio: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
    positive: Annotated[float, msgspec.Meta(gt=0.0, lt=10.0)]
    count: Annotated[int, msgspec.Meta(gt=0, lt=5)]


@settings(max_examples=300, deadline=None)
@given(strategy(mi.type_info(Bounded)))
def test_bounded_numbers_draw_inside_their_bounds(value: Bounded) -> None:
    """Finding 10: a float ``minimum``/``maximum`` (and exclusive bounds) bound the draws."""
    assert 0.0 <= value.ratio <= 1.0
    assert 0.0 < value.positive < 10.0
    assert 0 < value.count < 5
    # and the value round-trips through the type's own validation
    assert msgspec.convert(msgspec.to_builtins(value), Bounded) == value
