"""A multi grader's `calculate_output`: an arithmetic formula over the sub-graders' scores, parsed, never evaluated
as code.

The grammar is OpenAI's: numbers, sub-grader names, `+ - * / ^` (`^` is power, right-associative, binding tighter
than unary minus as in `-2^2 = -4`), parentheses, and the functions `min max abs floor ceil exp sqrt log`. The
formula is parsed once into a small tree (`parse`, at validation, so a bad formula is INVALID_ARGUMENT before
anything runs) and computed by walking it (`compute`). Bounds: MAX_FORMULA_CHARS characters and MAX_DEPTH levels of
nesting, so a hostile formula costs a bounded parse; a result that is not a finite number (division by zero, a
power that overflows, the log of a negative) is `FormulaError`, which the grader reports as `formula_parse_error`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["FUNCTIONS", "MAX_DEPTH", "MAX_FORMULA_CHARS", "Formula", "FormulaError", "compute", "parse"]

MAX_FORMULA_CHARS = 2048
MAX_DEPTH = 64


class FormulaError(ValueError):
    """A formula that does not parse, names an unknown grader or function, or has no finite value."""


def _log(*values: float) -> float:
    return math.log(*values)


FUNCTIONS: Mapping[str, tuple[Callable[..., float], int, int]] = {
    "min": (min, 1, 64),
    "max": (max, 1, 64),
    "abs": (abs, 1, 1),
    "floor": (lambda x: float(math.floor(x)), 1, 1),
    "ceil": (lambda x: float(math.ceil(x)), 1, 1),
    "exp": (math.exp, 1, 1),
    "sqrt": (math.sqrt, 1, 1),
    "log": (_log, 1, 1),
}
"""Each function: its implementation and its least and most arguments."""

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][\w.-]*)|(.))")


@dataclass(frozen=True)
class Formula:
    """A parsed formula: the tree, and the sub-grader names it reads."""

    tree: tuple[object, ...]
    names: frozenset[str]
    text: str


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(text):
        number, name, other = match.groups()
        if number is not None:
            found.append(("number", number))
        elif name is not None:
            found.append(("name", name))
        elif other is not None and not other.isspace():
            if other not in "+-*/^(),":
                raise FormulaError(f"unexpected character {other!r} in the formula")
            found.append(("op", other))
    return found


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.position = 0
        self.names: set[str] = set()

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, value: str) -> bool:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] == value:
            self.position += 1
            return True
        return False

    def expression(self, depth: int) -> tuple[object, ...]:
        if depth > MAX_DEPTH:
            raise FormulaError(f"the formula nests more than {MAX_DEPTH} levels")
        node = self.term(depth)
        while True:
            if self.take("+"):
                node = ("+", node, self.term(depth))
            elif self.take("-"):
                node = ("-", node, self.term(depth))
            else:
                return node

    def term(self, depth: int) -> tuple[object, ...]:
        node = self.unary(depth)
        while True:
            if self.take("*"):
                node = ("*", node, self.unary(depth))
            elif self.take("/"):
                node = ("/", node, self.unary(depth))
            else:
                return node

    def unary(self, depth: int) -> tuple[object, ...]:
        if self.take("-"):
            return ("neg", self.unary(depth + 1))
        if self.take("+"):
            return self.unary(depth + 1)
        return self.power(depth)

    def power(self, depth: int) -> tuple[object, ...]:
        base = self.atom(depth)
        if self.take("^"):
            return ("^", base, self.unary(depth + 1))
        return base

    def atom(self, depth: int) -> tuple[object, ...]:
        token = self.peek()
        if token is None:
            raise FormulaError("the formula ends where a value was expected")
        kind, text = token
        self.position += 1
        if kind == "number":
            return ("num", float(text))
        if kind == "name":
            if self.take("("):
                if text not in FUNCTIONS:
                    raise FormulaError(f"unknown function {text!r}; known: {', '.join(sorted(FUNCTIONS))}")
                arguments = [self.expression(depth + 1)]
                while self.take(","):
                    arguments.append(self.expression(depth + 1))
                if not self.take(")"):
                    raise FormulaError(f"{text}( is not closed")
                _, least, most = FUNCTIONS[text]
                if not least <= len(arguments) <= most:
                    raise FormulaError(f"{text} takes {least}..{most} arguments, got {len(arguments)}")
                return ("call", text, tuple(arguments))
            self.names.add(text)
            return ("var", text)
        if kind == "op" and text == "(":
            node = self.expression(depth + 1)
            if not self.take(")"):
                raise FormulaError("a parenthesis is not closed")
            return node
        raise FormulaError(f"unexpected {text!r} in the formula")


def parse(text: str) -> Formula:
    """The formula's tree; raises FormulaError for one that does not parse or is over the bounds."""
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(f"the formula is over {MAX_FORMULA_CHARS} characters")
    parser = _Parser(_tokens(text))
    if not parser.tokens:
        raise FormulaError("the formula is empty")
    tree = parser.expression(0)
    if parser.peek() is not None:
        raise FormulaError(f"unexpected {parser.peek()[1]!r} after the end of the formula")  # type: ignore[index]
    return Formula(tree, frozenset(parser.names), text)


def compute(formula: Formula, values: Mapping[str, float]) -> float:
    """The formula's value for the sub-graders' `values`; FormulaError when it is not a finite number."""
    try:
        result = _value(formula.tree, values)
    except (ArithmeticError, ValueError, TypeError) as exc:  # TypeError: a negative base to a fractional power
        raise FormulaError(f"the formula has no value: {exc}") from None
    if not math.isfinite(result):
        raise FormulaError(f"the formula's value is {result}")
    return result


def _value(node: tuple[object, ...], values: Mapping[str, float]) -> float:
    kind = node[0]
    if kind == "num":
        return node[1]  # type: ignore[return-value]
    if kind == "var":
        name = node[1]
        if name not in values:
            raise FormulaError(f"the formula names {name!r}, which is not one of the graders")
        return values[name]  # type: ignore[index]
    if kind == "neg":
        return -_value(node[1], values)  # type: ignore[arg-type]
    if kind == "call":
        function = FUNCTIONS[node[1]][0]  # type: ignore[index]
        return float(function(*(_value(argument, values) for argument in node[2])))  # type: ignore[attr-defined]
    left, right = _value(node[1], values), _value(node[2], values)  # type: ignore[arg-type]
    if kind == "+":
        return left + right
    if kind == "-":
        return left - right
    if kind == "*":
        return left * right
    if kind == "/":
        return left / right
    return float(left**right)
