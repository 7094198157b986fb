"""The Prometheus Operator objects (ServiceMonitor, PodMonitor, PrometheusRule) checked against their
CRDs' structure, the way the API server would with the Operator's CRDs installed.

kubernetes-validate has no schema for them (tests/deploy/test_manifests.py proves it refuses them), so the checks
there look at chosen fields. Here every rendered CR is validated against a structural schema transcribed from the
prometheus-operator v1 CRDs (monitoring.coreos.com/v1): unknown fields are refused at every level, durations match
the CRD's pattern, relabel actions are the CRD's enum, and required fields are present. A misspelt field, which the
API server would prune or refuse and which would silently turn a scrape or an alert off, fails here.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from tests.deploy.support import KUSTOMIZATIONS, Obj, render

DURATION = {
    "type": "string",
    "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
LABEL_SELECTOR = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": STRING_MAP,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
RELABEL_ACTIONS = [
    spelling
    for action in (
        "replace",
        "keep",
        "drop",
        "hashmod",
        "labelmap",
        "labeldrop",
        "labelkeep",
        "lowercase",
        "uppercase",
        "keepequal",
        "dropequal",
    )
    for spelling in (action, {"hashmod": "HashMod", "labelmap": "LabelMap"}.get(action, action.capitalize()))
]
RELABELINGS = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "sourceLabels": {"type": "array", "items": {"type": "string"}},
            "separator": {"type": "string"},
            "targetLabel": {"type": "string"},
            "regex": {"type": "string"},
            "modulus": {"type": "integer"},
            "replacement": {"type": "string"},
            "action": {"enum": RELABEL_ACTIONS},
        },
    },
}
_ENDPOINT_COMMON: dict[str, Any] = {
    "path": {"type": "string"},
    "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
    "params": {"type": "object"},
    "interval": DURATION,
    "scrapeTimeout": DURATION,
    "honorLabels": {"type": "boolean"},
    "honorTimestamps": {"type": "boolean"},
    "trackTimestampsStaleness": {"type": "boolean"},
    "relabelings": RELABELINGS,
    "metricRelabelings": RELABELINGS,
    "tlsConfig": {"type": "object"},
    "authorization": {"type": "object"},
    "basicAuth": {"type": "object"},
    "oauth2": {"type": "object"},
    "proxyUrl": {"type": "string"},
    "followRedirects": {"type": "boolean"},
    "enableHttp2": {"type": "boolean"},
    "filterRunning": {"type": "boolean"},
}
_MONITOR_COMMON: dict[str, Any] = {
    "selector": LABEL_SELECTOR,
    "namespaceSelector": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"any": {"type": "boolean"}, "matchNames": {"type": "array", "items": {"type": "string"}}},
    },
    "jobLabel": {"type": "string"},
    "podTargetLabels": {"type": "array", "items": {"type": "string"}},
    "sampleLimit": {"type": "integer", "minimum": 0},
    "targetLimit": {"type": "integer", "minimum": 0},
    "labelLimit": {"type": "integer", "minimum": 0},
    "labelNameLengthLimit": {"type": "integer", "minimum": 0},
    "labelValueLengthLimit": {"type": "integer", "minimum": 0},
    "keepDroppedTargets": {"type": "integer", "minimum": 0},
    "scrapeClass": {"type": "string", "minLength": 1},
    "attachMetadata": {"type": "object"},
}
METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"},
        "namespace": {"type": "string"},
        "labels": STRING_MAP,
        "annotations": STRING_MAP,
    },
    "additionalProperties": False,
}


def _cr(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": kind},
            "metadata": METADATA,
            "spec": spec,
        },
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "ServiceMonitor": _cr(
        "ServiceMonitor",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector"],
            "properties": {
                **_MONITOR_COMMON,
                "targetLabels": {"type": "array", "items": {"type": "string"}},
                "endpoints": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            **_ENDPOINT_COMMON,
                            "port": {"type": "string"},
                            "targetPort": {"type": ["string", "integer"]},
                            "bearerTokenFile": {"type": "string"},
                            "bearerTokenSecret": {"type": "object"},
                        },
                    },
                },
            },
        },
    ),
    "PodMonitor": _cr(
        "PodMonitor",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector"],
            "properties": {
                **_MONITOR_COMMON,
                "podMetricsEndpoints": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            **_ENDPOINT_COMMON,
                            "port": {"type": "string"},
                            "portNumber": {"type": "integer", "minimum": 1, "maximum": 65535},
                            "targetPort": {"type": ["string", "integer"]},
                        },
                    },
                },
            },
        },
    ),
    "PrometheusRule": _cr(
        "PrometheusRule",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "interval": DURATION,
                            "query_offset": DURATION,
                            "limit": {"type": "integer"},
                            "partial_response_strategy": {"type": "string"},
                            "labels": STRING_MAP,
                            "rules": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["expr"],
                                    "properties": {
                                        "record": {"type": "string"},
                                        "alert": {"type": "string"},
                                        "expr": {"type": ["string", "integer"]},
                                        "for": DURATION,
                                        "keep_firing_for": {"type": "string", "minLength": 1, **DURATION},
                                        "labels": STRING_MAP,
                                        "annotations": STRING_MAP,
                                    },
                                    "oneOf": [{"required": ["record"]}, {"required": ["alert"]}],
                                },
                            },
                        },
                    },
                }
            },
        },
    ),
}


def _validate(obj: Obj) -> None:
    jsonschema.validate(obj, SCHEMAS[obj["kind"]])


def _operator_objects() -> list[tuple[str, Obj]]:
    return [(where, obj) for where in KUSTOMIZATIONS for obj in render(where) if obj["kind"] in SCHEMAS]


@pytest.mark.parametrize(
    ("where", "obj"), _operator_objects(), ids=lambda value: value if isinstance(value, str) else value["kind"]
)
def test_every_operator_object_matches_its_crd_structure(where: str, obj: Obj) -> None:
    _validate(obj)


def test_every_operator_kind_is_rendered_somewhere() -> None:
    assert {obj["kind"] for _, obj in _operator_objects()} == set(SCHEMAS)


def test_recording_rules_carry_no_for_and_alert_names_are_unique() -> None:
    """The Operator's admission webhook (and Prometheus) refuse `for` on a recording rule; duplicate alert names in
    one PrometheusRule make runbook links and silences ambiguous."""
    for _, obj in _operator_objects():
        if obj["kind"] != "PrometheusRule":
            continue
        rules = [rule for group in obj["spec"]["groups"] for rule in group["rules"]]
        assert all("for" not in rule and "keep_firing_for" not in rule for rule in rules if "record" in rule)
        alerts = [rule["alert"] for rule in rules if "alert" in rule]
        assert len(alerts) == len(set(alerts))
        names = [group["name"] for group in obj["spec"]["groups"]]
        assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("kind", "spoil"),
    [
        ("ServiceMonitor", lambda o: o["spec"]["endpoints"][0].__setitem__("scrapeInterval", "30s")),
        ("ServiceMonitor", lambda o: o["spec"]["endpoints"][0].__setitem__("interval", "30 seconds")),
        ("ServiceMonitor", lambda o: o["spec"].pop("selector")),
        ("PodMonitor", lambda o: o["spec"]["podMetricsEndpoints"][0]["relabelings"][0].__setitem__("action", "set")),
        ("PrometheusRule", lambda o: o["spec"]["groups"][0]["rules"][0].__setitem__("expression", "up")),
        ("PrometheusRule", lambda o: o["spec"]["groups"][0]["rules"][0].__setitem__("alert", "Both")),
    ],
    ids=[
        "misspelt-endpoint-field",
        "bad-duration",
        "no-selector",
        "bad-relabel-action",
        "misspelt-rule",
        "record+alert",
    ],
)
def test_the_structural_check_catches_a_broken_object(kind: str, spoil: Any) -> None:
    original = next(obj for _, obj in _operator_objects() if obj["kind"] == kind)
    _validate(original)
    broken = copy.deepcopy(original)
    spoil(broken)
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken)
