"""Judge panels: who is asked (members, each a host and a model), how their votes decide (quorum, tie policy), and
how often each is asked (samples). Data and its resolution only; asking is `ruled`, counting is `votes`.

A request names a panel inline (`judges: [{host, model}, ...]`) or by name (`judge: panel-a`, from the server's
`judge_panels_file`), or neither: then the panel is the server's one judge host, asked once, and nothing about the
verdict or its details changes from a judge without panels. The named file is YAML:

```yaml
panels:
  panel-a:
    judges: [{host: claude, model: sonnet}, {host: codex, model: gpt-5}, {host: gemini}]
    quorum: majority      # majority | unanimous | k
    tie: error            # error | cautious | first
    samples: 1
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from verdict.errors import ConfigError, InvalidConfig
from verdict.judges.hosts import Host, HostRegistry

__all__ = [
    "DEFAULT_QUORUM",
    "DEFAULT_TIE",
    "Member",
    "Panel",
    "PanelBook",
    "load_panel_book",
    "panel_for",
    "resolve_host",
]

DEFAULT_QUORUM = "majority"
DEFAULT_TIE = "error"
_QUORUM_WORDS = ("majority", "unanimous")
_TIES = ("error", "cautious", "first")
_MAX_MEMBERS = 9
_MAX_SAMPLES = 9


@dataclass(frozen=True)
class Member:
    """One judge of a panel. `host` None is the server's judge host; `model` "" is the evaluator's model."""

    host: Host | None = None
    model: str = ""
    host_name: str = ""
    """The host as configured (a CLI name or a URL), for the details; "" for the server's judge host."""

    def label(self, default_host: str, default_model: str) -> str:
        """How details and metrics name this member: host/model."""
        host = self.host.name if self.host is not None else default_host
        return f"{host}/{self.model or default_model}"


@dataclass(frozen=True)
class Panel:
    """Who is asked, how often, and how the votes decide. `name` is the named panel's, "" for an inline one."""

    members: tuple[Member, ...] = (Member(),)
    quorum: str = DEFAULT_QUORUM
    tie: str = DEFAULT_TIE
    samples: int = 1
    name: str = ""

    @property
    def single(self) -> bool:
        """One judge asked once: the verdict is that judge's ruling, with no panel details."""
        return len(self.members) == 1 and self.samples == 1

    @property
    def voters(self) -> int:
        return len(self.members) * self.samples


PanelBook = Mapping[str, Panel]
"""The named panels of the server configuration, by name."""


def resolve_host(hosts: HostRegistry, name: str, *, source: str) -> Host:
    """The host a panel member names: a host name, an http(s) URL, or a CLI's program name (`claude` for
    claude-code), which is what a little-loops panel block writes. Raises ConfigError naming `source`."""
    by_binary = {host.binary: host for host in hosts}
    name = name.strip()
    if name not in hosts.by_name and name in by_binary:
        return by_binary[name]
    return hosts.named(name, source=source)


def _member(raw: Any, hosts: HostRegistry, path: str, *, source: str) -> Member:
    if not isinstance(raw, Mapping) or not str(raw.get("host", "")).strip():
        raise ConfigError(source, f"{path} must be a mapping with a `host`, got {raw!r}")
    name = str(raw["host"]).strip()
    unknown = set(raw) - {"host", "model"}
    if unknown:
        raise ConfigError(source, f"{path} has unknown keys {sorted(unknown)} (a judge takes host and model)")
    return Member(resolve_host(hosts, name, source=source), str(raw.get("model", "") or ""), name)


def load_panel_book(path: str, hosts: HostRegistry) -> dict[str, Panel]:
    """The panels `judge_panels_file` names; {} when unset. Raises ConfigError (the server refuses to start) for a
    file that cannot be read, an unknown host, or a quorum no panel of its size can reach."""
    if not path:
        return {}
    source = "judge_panels_file"
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(source, f"cannot read {path}: {exc}") from None
    panels = document.get("panels") if isinstance(document, Mapping) else None
    if not isinstance(panels, Mapping):
        raise ConfigError(source, f"{path} must hold a mapping `panels: {{name: {{judges: [...]}}}}`")
    book: dict[str, Panel] = {}
    for name, raw in panels.items():
        where = f"panels.{name}"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("judges"), list) or not raw["judges"]:
            raise ConfigError(source, f"{where} needs a non-empty list `judges`")
        if len(raw["judges"]) > _MAX_MEMBERS:
            raise ConfigError(source, f"{where} has more than {_MAX_MEMBERS} judges")
        members = tuple(
            _member(item, hosts, f"{where}.judges[{index}]", source=source) for index, item in enumerate(raw["judges"])
        )
        seen = [(member.host.name if member.host else "", member.model) for member in members]
        if len(set(seen)) < len(seen):
            raise ConfigError(source, f"{where} lists a judge twice (it would vote twice on one ruling)")
        samples = raw.get("samples", 1)
        if not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= _MAX_SAMPLES:
            raise ConfigError(source, f"{where}.samples must be a whole number from 1 to {_MAX_SAMPLES}")
        if len(members) * samples > _MAX_MEMBERS:
            raise ConfigError(source, f"{where} asks {len(members) * samples} times; at most {_MAX_MEMBERS}")
        tie = str(raw.get("tie", DEFAULT_TIE))
        if tie not in _TIES:
            raise ConfigError(source, f"{where}.tie must be one of {', '.join(_TIES)}, got {tie!r}")
        quorum = str(raw.get("quorum", DEFAULT_QUORUM)).strip()
        if quorum not in _QUORUM_WORDS and not (quorum.isdigit() and 1 <= int(quorum) <= len(members) * samples):
            raise ConfigError(source, f"{where}.quorum must be majority, unanimous or 1..{len(members) * samples}")
        book[str(name)] = Panel(members, quorum, tie, samples, str(name))
    return book


def panel_for(settings: Mapping[str, Any], book: PanelBook, hosts: HostRegistry) -> Panel:
    """The panel a validated configuration asks for: its inline `judges`, the named `judge`, or the judge host; its
    own quorum, tie and samples override the named panel's. Raises InvalidConfig naming the field."""
    name = settings.get("judge")
    inline = settings.get("judges") or []
    if name is not None:
        if name not in book:
            known = ", ".join(sorted(book)) or "none are configured (judge_panels_file)"
            raise InvalidConfig(f"no judge panel named {name!r}; known: {known}", field="config.judge")
        base = book[name]
    elif inline:
        members = []
        for index, raw in enumerate(inline):
            try:
                host = resolve_host(hosts, raw["host"], source=f"config.judges[{index}].host")
            except ConfigError as exc:
                raise InvalidConfig(str(exc), field=f"config.judges[{index}].host") from None
            members.append(Member(host, raw.get("model", ""), raw["host"]))
        base = Panel(tuple(members))
    else:
        base = Panel()
    samples = int(settings.get("samples") or base.samples)
    if len(base.members) * samples > _MAX_MEMBERS:
        raise InvalidConfig(
            f"a panel asks at most {_MAX_MEMBERS} times per question (judges x samples), got "
            f"{len(base.members) * samples}",
            field="config.samples",
        )
    quorum = str(settings.get("quorum") or base.quorum)
    if quorum.isdigit() and int(quorum) > len(base.members) * samples:
        raise InvalidConfig(
            f"config.quorum {quorum} is more votes than {len(base.members) * samples} asks can give",
            field="config.quorum",
        )
    return Panel(base.members, quorum, str(settings.get("tie") or base.tie), samples, base.name)
