"""Write the OpenAPI 3.1 document of the HTTP port from the proto (never edit the document by hand).

The document describes what the Connect protocol serves for each RPC of `verdict.v1.VerdictService`:
`POST /verdict.v1.VerdictService/METHOD` with a JSON body (the request message in protobuf's JSON mapping) answered
by the response message, or a Connect error (`code`, `message`, `details` with a readable `debug`). Schemas follow
protobuf's JSON mapping: lowerCamelCase names, 64-bit integers as strings, enums by name, `Struct` as an object. The
descriptions are the proto's own comments (protoc's source info), so the document says what the proto says.

`python scripts/gen_openapi.py` writes service/verdict/server/openapi.json (package data, served at /openapi.json);
`--check` fails when the committed document differs from a fresh one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PROTO = "verdict/v1/verdict.proto"
OUTPUT = ROOT / "service" / "verdict" / "server" / "openapi.json"
SERVICE = "verdict.v1.VerdictService"

FieldProto = descriptor_pb2.FieldDescriptorProto
_SCALARS: dict[int, dict[str, Any]] = {
    FieldProto.TYPE_DOUBLE: {"type": "number", "format": "double"},
    FieldProto.TYPE_FLOAT: {"type": "number", "format": "float"},
    FieldProto.TYPE_INT64: {"type": "string", "format": "int64"},
    FieldProto.TYPE_UINT64: {"type": "string", "format": "uint64"},
    FieldProto.TYPE_SINT64: {"type": "string", "format": "int64"},
    FieldProto.TYPE_FIXED64: {"type": "string", "format": "uint64"},
    FieldProto.TYPE_SFIXED64: {"type": "string", "format": "int64"},
    FieldProto.TYPE_INT32: {"type": "integer", "format": "int32"},
    FieldProto.TYPE_SINT32: {"type": "integer", "format": "int32"},
    FieldProto.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    FieldProto.TYPE_UINT32: {"type": "integer", "format": "uint32"},
    FieldProto.TYPE_FIXED32: {"type": "integer", "format": "uint32"},
    FieldProto.TYPE_BOOL: {"type": "boolean"},
    FieldProto.TYPE_STRING: {"type": "string"},
    FieldProto.TYPE_BYTES: {"type": "string", "format": "byte"},
}
_WELL_KNOWN: dict[str, dict[str, Any]] = {
    ".google.protobuf.Struct": {"type": "object", "additionalProperties": True},
    ".google.protobuf.Value": {},
    ".google.protobuf.ListValue": {"type": "array", "items": {}},
    ".google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    ".google.protobuf.Duration": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"},
    ".google.protobuf.Any": {"type": "object", "properties": {"@type": {"type": "string"}}},
}
_ERROR = {
    "type": "object",
    "description": "A Connect error: the gRPC status code's name, a message, and the rich details (base64 `value`, "
    "readable `debug`).",
    "properties": {
        "code": {"type": "string", "description": "The status code, e.g. invalid_argument, unavailable."},
        "message": {"type": "string"},
        "details": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "description": "e.g. google.rpc.BadRequest"},
                    "value": {"type": "string", "format": "byte", "description": "The detail, binary protobuf."},
                    "debug": {"type": "object", "description": "The same detail as protobuf JSON."},
                },
            },
        },
    },
    "required": ["code"],
}


def descriptor_set() -> descriptor_pb2.FileDescriptorSet:
    """The proto and its imports, with comments (protoc from grpcio-tools)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "set.pb"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{PROTO_ROOT}",
                "--include_imports",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                PROTO,
            ],
            check=True,
            cwd=PROTO_ROOT,
        )
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    """Each element's leading comment, by its source path, with protoc's one-space line indent removed."""
    return {
        tuple(location.path): "\n".join(line.strip() for line in location.leading_comments.strip().splitlines())
        for location in file.source_code_info.location
        if location.leading_comments.strip()
    }


def _summary(comment: str, fallback: str) -> str:
    """The first sentence of a comment, on one line."""
    sentence = " ".join(comment.split("\n\n")[0].split()).split(". ")[0].rstrip(".")
    return sentence or fallback


class _Builder:
    """Schemas for every message and enum the service's RPCs reach, named by their full proto names."""

    def __init__(self, files: descriptor_pb2.FileDescriptorSet) -> None:
        self.messages: dict[str, tuple[descriptor_pb2.DescriptorProto, str, tuple[int, ...]]] = {}
        self.enums: dict[str, tuple[descriptor_pb2.EnumDescriptorProto, str]] = {}
        self.comments: dict[str, dict[tuple[int, ...], str]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        for file in files.file:
            self.comments[file.name] = _comments(file)
            for index, message in enumerate(file.message_type):
                self._index(file, f".{file.package}", message, (4, index))
            for index, enum in enumerate(file.enum_type):
                self.enums[f".{file.package}.{enum.name}"] = (enum, self.comments[file.name].get((5, index), ""))

    def _index(
        self, file: descriptor_pb2.FileDescriptorProto, scope: str, message: descriptor_pb2.DescriptorProto, path: Any
    ) -> None:
        name = f"{scope}.{message.name}"
        self.messages[name] = (message, file.name, path)
        for index, nested in enumerate(message.nested_type):
            self._index(file, name, nested, (*path, 3, index))
        for index, enum in enumerate(message.enum_type):
            self.enums[f"{name}.{enum.name}"] = (enum, self.comments[file.name].get((*path, 4, index), ""))

    def ref(self, type_name: str) -> dict[str, Any]:
        if type_name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[type_name])
        key = type_name.lstrip(".")
        if key not in self.schemas:
            self.schemas[key] = {}
            self.schemas[key] = self._enum(type_name) if type_name in self.enums else self._message(type_name)
        return {"$ref": f"#/components/schemas/{key}"}

    def _enum(self, type_name: str) -> dict[str, Any]:
        enum, comment = self.enums[type_name]
        schema: dict[str, Any] = {"type": "string", "enum": [value.name for value in enum.value]}
        if comment:
            schema["description"] = comment
        return schema

    def _field(self, field: FieldProto) -> dict[str, Any]:
        if field.type in (FieldProto.TYPE_MESSAGE, FieldProto.TYPE_ENUM):
            return self.ref(field.type_name)
        return dict(_SCALARS[field.type])

    def _message(self, type_name: str) -> dict[str, Any]:
        message, file_name, path = self.messages[type_name]
        comments = self.comments[file_name]
        properties: dict[str, Any] = {}
        for index, field in enumerate(message.field):
            entry = self.messages.get(field.type_name)
            if entry is not None and entry[0].options.map_entry:
                value = next(f for f in entry[0].field if f.name == "value")
                schema: dict[str, Any] = {"type": "object", "additionalProperties": self._field(value)}
            elif field.label == FieldProto.LABEL_REPEATED:
                schema = {"type": "array", "items": self._field(field)}
            else:
                schema = self._field(field)
            comment = comments.get((*path, 2, index), "")
            if comment:
                schema = {"allOf": [schema], "description": comment} if "$ref" in schema else {**schema}
                schema.setdefault("description", comment)
            properties[field.json_name] = schema
        result: dict[str, Any] = {"type": "object", "properties": properties}
        comment = comments.get(tuple(path), "")
        if comment:
            result["description"] = comment
        return result


def document(files: descriptor_pb2.FileDescriptorSet) -> dict[str, Any]:
    """The OpenAPI 3.1 document for the service in `files`."""
    builder = _Builder(files)
    package, _, service_name = SERVICE.rpartition(".")
    file = next(f for f in files.file if f.package == package and any(s.name == service_name for s in f.service))
    service_index, service = next((i, s) for i, s in enumerate(file.service) if s.name == service_name)
    comments = _comments(file)
    paths: dict[str, Any] = {}
    for index, method in enumerate(service.method):
        error = {"description": "A Connect error", "content": {"application/json": {"schema": _ERROR}}}
        paths[f"/{SERVICE}/{method.name}"] = {
            "post": {
                "operationId": method.name,
                "summary": _summary(comments.get((6, service_index, 2, index), ""), method.name),
                "description": comments.get((6, service_index, 2, index), ""),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": builder.ref(method.input_type)}},
                },
                "responses": {
                    "200": {
                        "description": "The answer",
                        "content": {"application/json": {"schema": builder.ref(method.output_type)}},
                    },
                    "default": error,
                },
            }
        }
    health = {
        "description": "Health, as the gRPC health service reports it",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HealthStatus"}}},
    }
    for path, summary in (
        ("/healthz", "Liveness: the gRPC health name `liveness`"),
        ("/readyz", "Readiness: the gRPC health name `` (the whole server)"),
        ("/health/{name}", "Any gRPC health name, e.g. verdict.v1.VerdictService"),
    ):
        operation: dict[str, Any] = {
            "summary": summary,
            "responses": {"200": health, "503": health, "404": {"description": "Unknown health name"}},
        }
        if "{name}" in path:
            operation["parameters"] = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
        paths[path] = {"get": operation}
    schemas = dict(sorted(builder.schemas.items()))
    schemas["HealthStatus"] = {
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "status": {"type": "string", "enum": ["SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"]},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": SERVICE,
            "version": "v1",
            "description": comments.get((6, service_index), "")
            + "\n\nServed over the Connect protocol on the HTTP port (http_address): POST JSON with "
            "`Content-Type: application/json`.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }


def render() -> str:
    return json.dumps(document(descriptor_set()), indent=2, sort_keys=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed document differs from the proto")
    args = parser.parse_args()
    fresh = render()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != fresh:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run `python scripts/gen_openapi.py`", file=sys.stderr)
            return 1
        print("OpenAPI document matches the proto")
        return 0
    OUTPUT.write_text(fresh)
    print("wrote", OUTPUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
