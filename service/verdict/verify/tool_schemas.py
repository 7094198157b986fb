"""The JSON Schemas of declared tools, compiled once per schema digest into bounded validators, and a call's
arguments checked against them.

The validator is `jsonschema` (with `referencing` for `$ref`): the reference implementation of every draft, kept by
the JSON Schema organisation's own maintainers, and an interpreter: it walks the schema, it never generates and
executes code from it (fastjsonschema does, and a caller's schema is untrusted). What it would do unbounded is
bounded here:

- Remote references are never retrieved: the registry refuses every URI it was not given, and a `$ref` that is not
  local (`#...`) in a schema without `$id` is refused when the schema is compiled.
- Schema size, nesting depth, the values of one `enum` and the number of `pattern`s are bounded
  (`MAX_SCHEMA_BYTES`, `MAX_SCHEMA_DEPTH`, `MAX_ENUM_VALUES`, `MAX_PATTERNS`); past them the schema is refused.
- `$ref` resolutions per call are bounded (`MAX_REF_RESOLUTIONS`; a schema that refers to itself for ever would
  otherwise recurse until Python gives up), and so is the call's time (the caller's `time_limit`).
- `pattern` and `patternProperties` run through `verdict.patterns`, the evaluators' ReDoS bound (the `regex` engine's
  own match timeout, the GIL released while matching), instead of jsonschema's unbounded `re.search`; a schema with
  patterns is checked off the event loop (`CompiledTool.patterned`).

A schema the server refuses, or that is not a JSON Schema, is the caller's error (`SchemaRefused`; the rpc layer sends
INVALID_ARGUMENT naming the tool's field). A call the bounds stop mid-check is `unverifiable` (`SchemaUncheckable`):
neither the model nor the caller is charged for what the server could not finish.

Dialects: `$schema` names draft-04, -06, -07, 2019-09 or 2020-12; without it, 2020-12, or draft-07 when the schema only
makes sense there (an `items` array, `dependencies`), which is the dialect most providers' examples are written in.
Gemini's OpenAPI spellings (`"type": "OBJECT"`, `nullable: true`) are read as the JSON Schema they mean. A `strict`
tool (OpenAI strict mode) is checked as strict mode enforces it: every property required, no additional properties.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import referencing
import referencing.exceptions
from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    _keywords,
    validators,
)
from jsonschema.exceptions import SchemaError, ValidationError, best_match

from verdict import patterns
from verdict.verify.model import ToolDefinition

__all__ = [
    "MAX_ENUM_VALUES",
    "MAX_PATTERNS",
    "MAX_REF_RESOLUTIONS",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "BoundedCache",
    "CompiledTool",
    "SchemaFinding",
    "SchemaRefused",
    "SchemaUncheckable",
    "ToolSchemas",
    "check_arguments",
    "compile_tool",
    "schema_digest",
]

MAX_SCHEMA_BYTES = 128 * 1024
"""Largest parameters schema of one tool, in UTF-8 bytes. Real tools' schemas are a few KiB; OpenAPI-derived ones
with long descriptions reach tens."""
MAX_SCHEMA_DEPTH = 64
"""Deepest nesting of objects and arrays in one schema (jsonschema recurses once per level)."""
MAX_ENUM_VALUES = 4096
"""Most values one `enum` may list (every checked value is compared with each of them)."""
MAX_PATTERNS = 256
"""Most `pattern` and `patternProperties` regular expressions in one schema."""
MAX_REF_RESOLUTIONS = 1000
"""Most `$ref` / `$dynamicRef` resolutions while checking one call."""

_ANY_OBJECT: dict[str, Any] = {"type": "object"}
_DIALECTS: tuple[tuple[str, Any], ...] = (
    ("draft-04", Draft4Validator),
    ("draft-06", Draft6Validator),
    ("draft-07", Draft7Validator),
    ("2019-09", Draft201909Validator),
    ("2020-12", Draft202012Validator),
)
_OPENAPI_TYPES = {name.upper(): name for name in ("object", "string", "integer", "number", "boolean", "array", "null")}
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})
"""Keywords whose values are instances, not schemas: never rewritten, never searched for `$ref` or `pattern`."""
_SHOW = 60


class SchemaRefused(ValueError):
    """A tool's schema the server will not use: not JSON, not a JSON Schema, past a bound, or a remote `$ref`."""


class SchemaUncheckable(Exception):
    """Checking one call hit a bound (time, `$ref` resolutions, recursion) or a reference that does not resolve."""


@dataclass(frozen=True)
class SchemaFinding:
    """Why arguments do not validate: a stable `reason`, a detail naming the value, a JSON Pointer to it."""

    reason: str
    detail: str
    pointer: str


@dataclass(frozen=True)
class CompiledTool:
    """A declared tool ready to check calls: its validator, the SHA-256 of its canonical schema, whether the schema
    has regular expressions (so a call is checked off the event loop)."""

    name: str
    digest: str
    strict: bool
    validator: Any
    patterned: bool
    compiled_patterns: Mapping[str, Any] = field(default_factory=dict)


_K = TypeVar("_K")
_V = TypeVar("_V")


class BoundedCache(Generic[_K, _V]):
    """A least-recently-used mapping of at most `capacity` entries that counts its hits and misses. Safe to use from
    several threads (tool lists are compiled off the event loop); `make` runs outside the lock."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[_K, _V] = OrderedDict()
        self._lock = threading.Lock()

    def peek(self, key: _K) -> _V | None:
        """The entry for `key` (counted as a hit, and kept longest), or None (counted as a miss)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry

    def put(self, key: _K, entry: _V) -> None:
        """Keep `entry` for `key`, dropping the least recently used entry past `capacity`."""
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            if len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def get(self, key: _K, make: Callable[[], _V]) -> tuple[_V, bool]:
        """The entry for `key` and whether it was cached, made (and kept) with `make` when it was not."""
        entry = self.peek(key)
        if entry is not None:
            return entry, True
        entry = make()
        self.put(key, entry)
        return entry, False

    def __len__(self) -> int:
        return len(self._entries)


class ToolSchemas:
    """Compiled tools by (schema text, strict), bounded: a loop that sends the same tools every turn compiles once.

    A refusal is cached as well, so a caller repeating a hostile schema pays the bounded compile once too.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._cache: BoundedCache[bytes, CompiledTool | SchemaRefused] = BoundedCache(capacity)

    @property
    def cache(self) -> BoundedCache[bytes, CompiledTool | SchemaRefused]:
        return self._cache

    def compile(self, definition: ToolDefinition) -> tuple[CompiledTool, bool]:
        """The compiled tool and whether it came from the cache; raises SchemaRefused."""
        key = hashlib.sha256(
            definition.parameters.encode("utf-8", "surrogatepass") + (b"\x01" if definition.strict else b"\x00")
        ).digest()
        entry, hit = self._cache.get(key, lambda: _compile_or_refusal(definition))
        if isinstance(entry, SchemaRefused):
            raise entry
        if entry.name != definition.name:  # the same schema under another name: share the validator
            entry = CompiledTool(
                definition.name, entry.digest, entry.strict, entry.validator, entry.patterned, entry.compiled_patterns
            )
        return entry, hit


def _compile_or_refusal(definition: ToolDefinition) -> CompiledTool | SchemaRefused:
    try:
        return compile_tool(definition)
    except SchemaRefused as refused:
        return refused


def schema_digest(schema: Any) -> str:
    """The SHA-256 of a schema's canonical JSON (sorted keys, no spaces), as checked (Gemini's spellings read, strict
    mode's rules made explicit): the same for the same check whichever wire form carried it, so a decision record
    names the schema a call was checked against."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _refuse_constant(name: str) -> Any:
    raise SchemaRefused(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def compile_tool(definition: ToolDefinition) -> CompiledTool:
    """Read, bound, normalise and compile one tool's schema. Raises SchemaRefused with a message for the caller."""
    text = definition.parameters
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaRefused(f"the schema is {size} bytes; at most {MAX_SCHEMA_BYTES} are checked")
    if text.strip():
        try:
            schema = _DECODER.decode(text)
        except json.JSONDecodeError as error:
            raise SchemaRefused(f"the schema is not JSON: {error.msg} at character {error.pos}") from None
        except (RecursionError, ValueError) as error:
            raise SchemaRefused(f"the schema is not JSON: {error}") from None
    else:
        schema = dict(_ANY_OBJECT)
    if not isinstance(schema, (dict, bool)):
        raise SchemaRefused("the schema must be a JSON object")
    found = _Survey()
    _survey(schema, 0, found)
    schema = _normalised(schema)
    if definition.strict:
        schema = _strict(schema)
    digest = schema_digest(schema)
    if found.unevaluated and found.pattern_properties:
        raise SchemaRefused("patternProperties together with unevaluatedProperties is not supported")
    if not found.ids:
        for ref in found.refs:
            if not ref.startswith("#"):
                raise SchemaRefused(f"the $ref {ref[:_SHOW]!r} is not local; remote references are never retrieved")
    compiled_patterns: dict[str, Any] = {}
    for pattern in found.patterns:
        try:
            compiled = patterns.compile_bounded(pattern)
        except patterns.PatternTooLarge as error:
            raise SchemaRefused(str(error)) from None
        if compiled is None:
            raise SchemaRefused(f"the pattern {pattern[:_SHOW]!r} is not a valid regular expression")
        compiled_patterns[pattern] = compiled
    cls, checked = _dialect(schema)
    try:
        if not checked:
            cls.check_schema(schema)
    except SchemaError as error:
        raise SchemaRefused(f"not a valid JSON Schema ({_dialect_name(cls)}): {_short(error.message)}") from None
    except RecursionError:
        raise SchemaRefused("the schema nests too deeply to check") from None
    bounded = _BOUNDED[cls]
    validator = bounded(schema, registry=_REGISTRY)
    if not found.ids:
        for ref in found.refs:
            try:
                validator._resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                raise SchemaRefused(f"the $ref {ref[:_SHOW]!r} does not resolve within the schema") from None
    return CompiledTool(
        definition.name, digest, definition.strict, validator, bool(compiled_patterns), compiled_patterns
    )


@dataclass
class _Survey:
    refs: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    ids: bool = False
    unevaluated: bool = False
    pattern_properties: bool = False


def _survey(node: Any, depth: int, found: _Survey) -> None:
    """Walk the schema once, iteratively bounded by depth: refs, patterns, `$id`s, and the size bounds."""
    if depth > MAX_SCHEMA_DEPTH:
        raise SchemaRefused(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
    if isinstance(node, list):
        for item in node:
            _survey(item, depth + 1, found)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            if key == "enum" and isinstance(value, list) and len(value) > MAX_ENUM_VALUES:
                raise SchemaRefused(f"an enum lists {len(value)} values; at most {MAX_ENUM_VALUES} are checked")
            _depth_only(value, depth + 1)
            continue
        if key in ("$ref", "$dynamicRef", "$recursiveRef") and isinstance(value, str):
            found.refs.append(value)
        elif key in ("$id", "id") and isinstance(value, str):
            found.ids = True
        elif key == "pattern" and isinstance(value, str):
            found.patterns.append(value)
        elif key == "patternProperties" and isinstance(value, dict):
            found.pattern_properties = True
            found.patterns.extend(value)
        elif key == "unevaluatedProperties":
            found.unevaluated = True
        if key == "properties" and isinstance(value, dict):
            for sub in value.values():
                _survey(sub, depth + 1, found)
            continue
        _survey(value, depth + 1, found)
    if len(found.patterns) > MAX_PATTERNS:
        raise SchemaRefused(f"the schema has more than {MAX_PATTERNS} patterns")


def _depth_only(node: Any, depth: int) -> None:
    if depth > MAX_SCHEMA_DEPTH:
        raise SchemaRefused(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
    if isinstance(node, list):
        for item in node:
            _depth_only(item, depth + 1)
    elif isinstance(node, dict):
        for item in node.values():
            _depth_only(item, depth + 1)


def _normalised(node: Any) -> Any:
    """Gemini's (OpenAPI 3.0) spellings as JSON Schema: upper-case type names, `nullable: true`."""
    if isinstance(node, list):
        return [_normalised(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            result[key] = value
        elif key == "properties" and isinstance(value, dict):
            result[key] = {name: _normalised(sub) for name, sub in value.items()}
        elif key == "type" and isinstance(value, str) and value in _OPENAPI_TYPES:
            result[key] = _OPENAPI_TYPES[value]
        elif key == "type" and isinstance(value, str) and value == "TYPE_UNSPECIFIED":
            continue
        else:
            result[key] = _normalised(value)
    if result.get("nullable") is True and isinstance(result.get("type"), str):
        result["type"] = [result["type"], "null"]
        if isinstance(result.get("enum"), list) and None not in result["enum"]:
            result["enum"] = [*result["enum"], None]
    return result


def _strict(node: Any) -> Any:
    """OpenAI strict mode's rules made explicit: each object's properties all required, no others allowed."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            result[key] = value
        elif key == "properties" and isinstance(value, dict):
            result[key] = {name: _strict(sub) for name, sub in value.items()}
        else:
            result[key] = _strict(value)
    properties = result.get("properties")
    if isinstance(properties, dict):
        required = result.get("required")
        listed = list(required) if isinstance(required, list) else []
        result["required"] = listed + [name for name in properties if name not in listed]
        result.setdefault("additionalProperties", False)
    return result


def _dialect(schema: Any) -> tuple[Any, bool]:
    """The validator class for the schema's dialect, and whether the schema was already checked against it."""
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if isinstance(declared, str):
        for marker, cls in _DIALECTS:
            if marker in declared:
                return cls, False
        return Draft202012Validator, False
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        try:
            Draft7Validator.check_schema(schema)
        except SchemaError:
            return Draft202012Validator, False
        return Draft7Validator, True
    return Draft202012Validator, True


def _dialect_name(cls: Any) -> str:
    return next(marker for marker, known in _DIALECTS if known is cls)


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


_REGISTRY: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
"""Knows no URI and retrieves none: every remote `$ref` is Unresolvable, never fetched."""


@dataclass
class _Budget:
    deadline: float
    clock: Callable[[], float]
    refs_left: int
    compiled: Mapping[str, Any]

    def remaining(self) -> float:
        left = self.deadline - self.clock()
        if left <= 0:
            raise SchemaUncheckable("the check ran out of its time limit")
        return left


_BUDGET: contextvars.ContextVar[_Budget] = contextvars.ContextVar("verdict_tool_schema_budget")


def _matches(pattern: str, text: str) -> bool:
    budget = _BUDGET.get()
    try:
        return patterns.search_compiled(budget.compiled[pattern], text, timeout=budget.remaining())
    except patterns.PatternTimeout:
        raise SchemaUncheckable(f"the pattern {pattern[:_SHOW]!r} did not finish within its time limit") from None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{_short(repr(instance))} does not match {pattern[:_SHOW]!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if "patternProperties" not in schema:
        yield from _keywords.additionalProperties(validator, allowed, instance, schema)  # type: ignore[func-returns-value,misc]
        return
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    extras = [
        key for key in instance if key not in known and not any(_matches(p, key) for p in schema["patternProperties"])
    ]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        joined = ", ".join(repr(extra[:_SHOW]) for extra in sorted(extras))
        yield ValidationError(f"{joined} do(es) not match any of the property names or patterns")


def _counted(original: Callable[..., Iterator[ValidationError]]) -> Callable[..., Iterator[ValidationError]]:
    def resolve(validator: Any, ref: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        budget = _BUDGET.get()
        budget.refs_left -= 1
        if budget.refs_left < 0:
            raise SchemaUncheckable(f"more than {MAX_REF_RESOLUTIONS} $ref resolutions for one call")
        budget.remaining()
        yield from original(validator, ref, instance, schema)

    return resolve


def _bounded(cls: Any) -> Any:
    keywords = cls.VALIDATORS
    replaced: dict[str, Any] = {"pattern": _pattern, "patternProperties": _pattern_properties}
    if "additionalProperties" in keywords:
        replaced["additionalProperties"] = _additional_properties
    for name in ("$ref", "$dynamicRef", "$recursiveRef"):
        if name in keywords:
            replaced[name] = _counted(keywords[name])
    return validators.extend(cls, replaced)  # type: ignore[no-untyped-call]


_BOUNDED = {cls: _bounded(cls) for _, cls in _DIALECTS}

_REASONS = {
    "required": "missing_argument",
    "dependentRequired": "missing_argument",
    "dependencies": "missing_argument",
    "type": "wrong_type",
    "enum": "not_in_enum",
    "const": "not_in_enum",
    "additionalProperties": "unexpected_argument",
    "unevaluatedProperties": "unexpected_argument",
}
"""The schema keywords a tool-calling model breaks most, each with its own reason; any other keyword is `schema`."""


def check_arguments(
    tool: CompiledTool, arguments: Any, *, time_limit: float, clock: Callable[[], float] = time.monotonic
) -> SchemaFinding | None:
    """None when `arguments` validate against the tool's schema, else the most relevant violation.

    Raises SchemaUncheckable when a bound stops the check (`time_limit` seconds by `clock`, `$ref` resolutions,
    recursion) or a reference does not resolve. Call it off the event loop when `tool.patterned`.
    """
    token = _BUDGET.set(_Budget(clock() + time_limit, clock, MAX_REF_RESOLUTIONS, tool.compiled_patterns))
    try:
        error = best_match(tool.validator.iter_errors(arguments))
    except SchemaUncheckable:
        raise
    except RecursionError:
        raise SchemaUncheckable("the schema refers to itself deeper than the check can follow") from None
    except referencing.exceptions.Unresolvable as error:
        raise SchemaUncheckable(f"a $ref does not resolve: {_short(str(error))}") from None
    finally:
        _BUDGET.reset(token)
    if error is None:
        return None
    return _finding(error)


def _finding(error: ValidationError) -> SchemaFinding:
    path = list(error.absolute_path)
    keyword = str(error.validator)
    reason = _REASONS.get(keyword, "schema")
    if reason == "unexpected_argument" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extras = [key for key in error.instance if key not in known]
        if extras:
            path.append(extras[0])
            pointer = _pointer(path)
            return SchemaFinding(reason, f"{pointer}: unexpected argument {extras[0][:_SHOW]!r}", pointer)
    pointer = _pointer(path)
    where = pointer or "the arguments"
    if reason == "missing_argument":
        name = error.message.removesuffix(" is a required property")
        inside = f" in {pointer}" if pointer else ""
        return SchemaFinding(reason, f"missing required argument {_short(name)}{inside}", pointer)
    return SchemaFinding(reason, f"{where}: {_short(error.message)} ({keyword})", pointer)


def _pointer(path: list[Any]) -> str:
    """RFC 6901: `~` as `~0`, `/` as `~1`."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def _short(message: str) -> str:
    return message if len(message) <= 300 else message[:300] + "…"
