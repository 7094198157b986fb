"""`record`: an immutable value type that costs what a plain object costs to build.

`@dataclass(frozen=True)` guards immutability at run time: its `__init__` sets every field through
`object.__setattr__`, several times the cost of a plain attribute store. On VerifyResponse's path a short answer builds
seven such values (the input, the fence scan and its block, the pending check, the parser's result, the block's check,
the verification), and the guard was a sixth of the CPU time of verifying it (5.8 of 33.6 us; `bench/NOTES.md`,
"Where a short answer's time went"). A `record` is a slotted dataclass with a plain `__init__`, hashable and compared
by value like a frozen one, and declared frozen to the type checker (`typing.dataclass_transform(frozen_default=True)`):
assigning to a field is a mypy error, and mypy runs in `make test`. What is given up is only the run-time error for
code that escapes the type checker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

__all__ = ["record"]

_Record = TypeVar("_Record")


@dataclass_transform(frozen_default=True)
def record(cls: type[_Record]) -> type[_Record]:
    """Make `cls` a record: its annotated fields become `__init__` parameters, `__eq__` and `__hash__` use them, and
    the instances have slots, not a `__dict__`."""
    return dataclass(slots=True, unsafe_hash=True)(cls)
