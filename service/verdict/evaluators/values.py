"""JSON values at the edges of Evaluate: the one owner of how numbers cross between protobuf, JSON and Python.

Three rules live here and nowhere else:

- `whole_numbers`: a `google.protobuf.Struct` (the wire form of `context`, typed configuration and `details`) carries
  every number as a double, so `iteration: 3` arrives as 3.0 and would interpolate as "3.0" where a loop author
  wrote 3. Integral doubles inside the int64 range come back as ints (beyond it a double was never an integer a
  client sent).
- `non_finite_name`: JSON has no spelling for NaN and the infinities (and Python's float parse accepts "nan" and
  "inf" in an output), so they travel as the strings "nan", "inf" and "-inf", in details and in state tokens alike.
- `jsonable`: details as strict JSON a Struct holds and every client decodes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DETAIL_DEPTH",
    "NON_FINITE_NAMES",
    "WHOLE_NUMBER_LIMIT",
    "WholeNumbers",
    "jsonable",
    "non_finite_name",
    "whole_numbers",
]

WHOLE_NUMBER_LIMIT = 2**63
"""Integral doubles strictly inside ±2^63 (an int64, the widest integer a client's typed field can hold) become ints."""

NON_FINITE_NAMES = ("nan", "inf", "-inf")

MAX_DETAIL_DEPTH = 16
"""Containers below this depth in details are sent as their JSON text: clients' protobuf decoders refuse messages
nested past 100 levels, and each level of a Struct costs about three (a JSON object nested 33 deep is undecodable)."""


class WholeNumbers(dict[str, Any]):
    """A mapping `whole_numbers` built: walking it again finds nothing to change, so it is returned as is. The rpc
    layer normalises a request's context once (off the event loop for a big one), and the dispatcher's second pass
    over a 180k-key context would otherwise cost the loop another 50 ms."""


def whole_numbers(value: Any) -> Any:
    """`value` with every integral finite float inside ±WHOLE_NUMBER_LIMIT, at any depth, turned into an int."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < WHOLE_NUMBER_LIMIT:
        return int(value)
    if isinstance(value, WholeNumbers):
        return value
    if isinstance(value, Mapping):
        return WholeNumbers({key: whole_numbers(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return [whole_numbers(item) for item in value]
    return value


def non_finite_name(value: float) -> str:
    """The JSON-safe spelling of a non-finite float: "nan", "inf" or "-inf"."""
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def jsonable(value: Any, depth: int = 0) -> Any:
    """Details as strict JSON that a Struct holds and every client can decode (outputs are untrusted JSON).

    NaN and infinities become their `non_finite_name`; an integer too large for a double (past about 1e308; a
    Struct number is a double) becomes its decimal string; a container nested MAX_DETAIL_DEPTH deep becomes its
    compact JSON text; any other object becomes its str().
    """
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite_name(value)
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:
            return str(value)
        return value
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_DETAIL_DEPTH:
        return _json_text(value)
    if isinstance(value, Mapping):
        return {str(key): jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item, depth + 1) for item in value]
    if value is None or isinstance(value, str | bool | float):
        return value
    return str(value)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError):
        return "(nested too deeply to show)"
