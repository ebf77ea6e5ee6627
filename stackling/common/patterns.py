"""Regular expressions that users supply: Nova's `name` and `ip` server filters, Heat's
`allowed_pattern` constraints and resource-type `name` filter.

Python's `re` has no time limit, and a pattern such as `(x+x+)+y` against a long enough
text backtracks for hours while holding the GIL: one request would stall the whole
process. The `regex` library matches with `re`'s semantics (its default V0 mode) and
takes a timeout; its compiler, though, expands counted repeats (`(a{1000}){1000}{1000}`
never finishes), so a pattern is first parsed by `re`'s own parser (fast, and the syntax
`re` accepts) and refused when its repeats expand past a bound. Both refusals are
`PatternTooCostly`; a pattern `re` cannot parse is `PatternError`.
"""

from __future__ import annotations

import functools
import re
import time
from typing import Any

# What one request may spend matching, and how far repeats may expand (a{100000}
# compiles in ~20 ms).
BUDGET = 0.5
MAX_EXPANSION = 100_000


class PatternError(ValueError):
    """Not a regular expression."""


class PatternTooCostly(PatternError):
    """A regular expression too costly to compile or to match."""


def _expansion(sub: Any) -> int:
    """The parsed pattern's size with each repeat's body counted as often as it may repeat."""
    from re import _constants as c  # re's own parser: no second grammar here
    from re import _parser

    total = 0
    for op, av in sub:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, high, body = av
            times = high if high != c.MAXREPEAT else low
            total += max(times, 1) * _expansion(body)
        else:
            total += 1
            stack = [av]
            while stack:
                item = stack.pop()
                if isinstance(item, _parser.SubPattern):
                    total += _expansion(item)
                elif isinstance(item, tuple | list):
                    stack.extend(item)
        if total > MAX_EXPANSION:
            raise PatternTooCostly("the regular expression repeats too much")
    return total


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    from re import _parser

    try:
        _expansion(_parser.parse(pattern))
    except re.error as err:
        raise PatternError(str(err)) from None
    except RecursionError:
        raise PatternTooCostly("the regular expression nests too deeply") from None
    import regex  # ~10 ms to import: only when a user's pattern is first matched

    return regex.compile(pattern)


class UserPattern:
    """A user's pattern and the time left to match it (shared by all its matches)."""

    def __init__(self, pattern: str, budget: float = BUDGET) -> None:
        if not isinstance(pattern, str):
            raise PatternError("the regular expression must be a string")
        self.rx = _compiled(pattern)
        self.deadline = time.monotonic() + budget

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise PatternTooCostly("the regular expression takes too long to match")
        return left

    def search(self, text: str) -> bool:
        try:
            return self.rx.search(text, timeout=self._left()) is not None
        except TimeoutError:
            raise PatternTooCostly("the regular expression takes too long to match") from None

    def fullmatch(self, text: str) -> bool:
        try:
            return self.rx.fullmatch(text, timeout=self._left()) is not None
        except TimeoutError:
            raise PatternTooCostly("the regular expression takes too long to match") from None
