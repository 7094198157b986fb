"""deploy/Dockerfile, read as a linter would: no Docker engine runs here, so the file itself is checked.

Each test is one property the issue asks of the image, and each would catch a plausible regression: a shell-form
entrypoint that swallows SIGTERM, a root user, a runtime install that needs the network, a COPY of a file that
.dockerignore keeps out of the build context.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

import pytest
import yaml

from tests.deploy.support import DEPLOY, OVERLAYS, ROOT, render, verdict_container, verdict_deployment
from verdict.config.sources import load_config

DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str

    @property
    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction, or None for shell form."""
        text = self.arguments.strip()
        if not text.startswith("["):
            return None
        value = json.loads(text)
        assert isinstance(value, list)
        assert all(isinstance(item, str) for item in value)
        return value

    def words(self) -> list[str]:
        return shlex.split(self.arguments)


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> Instruction:
        found = self.all(keyword)
        assert found, f"stage {self.name} has no {keyword}"
        return found[-1]

    def run_text(self) -> str:
        return "\n".join(i.arguments for i in self.all("RUN"))

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for instruction in self.all("ENV"):
            for word in instruction.words():
                key, _, value = word.partition("=")
                values[key] = value
        return values


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """(global ARG defaults, stages) of a Dockerfile. Handles comments, line continuations and FROM ... AS name."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "a line continuation runs off the end of the file"
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, arguments = line.partition(" ")
        instruction = Instruction(keyword.upper(), arguments.strip())
        if instruction.keyword == "FROM":
            words = instruction.words()
            words = [w for w in words if not w.startswith("--platform")]
            base = re.sub(r"\$\{?(\w+)\}?", lambda m: global_args.get(m.group(1), m.group(0)), words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(base, name))
        elif not stages:
            assert instruction.keyword == "ARG", f"{instruction.keyword} before the first FROM"
            key, _, value = instruction.arguments.partition("=")
            global_args[key] = value.strip('"')
        else:
            stages[-1].instructions.append(instruction)
    return global_args, stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))[1]


@pytest.fixture(scope="module")
def runtime(stages: list[Stage]) -> Stage:
    return stages[-1]


def test_multi_stage_on_the_slim_python_the_server_targets(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    assert stages[0].base == stages[-1].base == "python:3.13-slim"


def test_build_stage_makes_wheels_of_the_project_and_installs_only_those(stages: list[Stage]) -> None:
    build = stages[0].run_text()
    assert "python -m venv /opt/verdict" in build
    assert re.search(r"pip wheel\b.*--wheel-dir[ =]/wheels \.(?: |$)", build, re.M)
    install = re.search(r"pip install\b[^&;]*", build)
    assert install is not None
    assert "--no-index" in install.group(0), "only the wheels just built: the index is used once, by `pip wheel`"
    assert "--find-links=/wheels" in install.group(0)
    assert re.search(r"pip uninstall --yes pip", build), "the runtime virtualenv carries no installer"


def test_runtime_copies_the_virtualenv_and_installs_nothing_from_an_index(stages: list[Stage], runtime: Stage) -> None:
    copies = [i.words() for i in runtime.all("COPY") if i.arguments.startswith("--from")]
    assert [f"--from={stages[0].name}", "/opt/verdict", "/opt/verdict"] in copies
    assert "pip " not in runtime.run_text(), "no pip in the runtime stage: no index, no compiler, no wheels layer"
    assert runtime.env()["PATH"].startswith("/opt/verdict/bin:")


def test_builds_with_the_classic_builder_and_pulls_nothing_but_the_base() -> None:
    """A `# syntax=` line makes BuildKit pull its Dockerfile frontend from a registry, and `RUN --mount` needs
    BuildKit; `make image-test` builds where no registry is reachable, with DOCKER_BUILDKIT=0."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert not re.search(r"^#\s*syntax\s*=", text, re.M | re.I)
    global_args, stages = parse(text)
    for stage in stages:
        assert stage.base in {global_args["PYTHON_IMAGE"], *(s.name for s in stages)}, stage.base
        for instruction in stage.all("RUN"):
            assert not instruction.arguments.startswith("--"), f"BuildKit-only RUN flag: {instruction.arguments[:40]}"
        for instruction in stage.all("COPY"):
            assert not re.search(r"--from=\S*[:/]", instruction.arguments), "COPY --from an image would pull it"


def test_runtime_has_bash_and_git_for_the_runner(runtime: Stage) -> None:
    apt = re.search(r"apt-get install[^;&]*", runtime.run_text())
    assert apt is not None
    assert {"bash", "git"} <= set(apt.group(0).split())
    assert "rm -rf /var/lib/apt/lists/*" in runtime.run_text()


def test_runs_as_a_numeric_non_root_user(runtime: Stage) -> None:
    user = runtime.last("USER").arguments
    uid, _, gid = user.partition(":")
    assert uid.isdigit(), "numeric, so kubelet can verify runAsNonRoot"
    assert int(uid) > 0
    assert gid.isdigit()
    assert int(gid) > 0
    last_user_index = max(i for i, ins in enumerate(runtime.instructions) if ins.keyword == "USER")
    assert all(ins.keyword != "RUN" for ins in runtime.instructions[last_user_index:]), "nothing runs as root after"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_image_user_matches_the_pods_run_as_user(runtime: Stage, overlay: str) -> None:
    uid, _, gid = runtime.last("USER").arguments.partition(":")
    security = verdict_container(verdict_deployment(render(f"overlays/{overlay}")))["securityContext"]
    assert (security["runAsUser"], security["runAsGroup"]) == (int(uid), int(gid))


def test_exec_form_entrypoint_so_sigterm_reaches_the_server(runtime: Stage) -> None:
    assert runtime.last("ENTRYPOINT").exec_form == ["verdict", "serve"]
    cmd = runtime.last("CMD").exec_form
    assert cmd is not None
    assert cmd[0] == "--config"
    assert runtime.last("STOPSIGNAL").arguments == "SIGTERM"


def test_default_config_is_the_base_configmap_file_at_the_path_pods_use(runtime: Stage) -> None:
    cmd = runtime.last("CMD").exec_form
    assert cmd is not None
    config_path = cmd[1]
    copies = {i.words()[-1]: i.words()[0] for i in runtime.all("COPY") if not i.arguments.startswith("--")}
    assert copies[config_path] == "deploy/base/config.yaml"
    load_config(ROOT / copies[config_path])
    for overlay in OVERLAYS:
        args = verdict_container(verdict_deployment(render(f"overlays/{overlay}")))["args"]
        assert args[args.index("--config") + 1] == config_path


def test_environment_suits_a_read_only_root_filesystem(runtime: Stage) -> None:
    env = runtime.env()
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["HOME"] == "/tmp", "the only writable directory in the pod"


def test_exposes_the_configured_ports(runtime: Stage) -> None:
    exposed = {int(port.split("/")[0]) for i in runtime.all("EXPOSE") for port in i.words()}
    config = load_config(DEPLOY / "base" / "config.yaml")
    assert exposed == {int(config.grpc_address.rpartition(":")[2]), int(config.metrics_address.rpartition(":")[2])}


def test_judge_cli_build_argument_installs_node_packages_only_when_set(runtime: Stage) -> None:
    args = {i.arguments.partition("=")[0]: i.arguments.partition("=")[2] for i in runtime.all("ARG")}
    assert args["JUDGE_NPM_PACKAGES"] == '""'
    text = runtime.run_text()
    assert re.search(
        r'if \[ -n "\$\{JUDGE_NPM_PACKAGES\}" \]; then.*npm install --global.*\$\{JUDGE_NPM_PACKAGES\}', text
    )


def test_healthcheck_uses_the_shipped_probe(runtime: Stage) -> None:
    healthcheck = runtime.last("HEALTHCHECK").arguments
    probe = json.loads(healthcheck[healthcheck.index("CMD") + 3 :].strip())
    copied = {i.words()[-1] for i in runtime.all("COPY")}
    assert probe[1] in copied
    assert probe[-2:] == ["--service", "liveness"]


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's .dockerignore rule: the last matching pattern wins; a pattern matches a path or any of its parents."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern.removeprefix("!").strip("/")
        regex = re.escape(body).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        if any(re.fullmatch(regex, prefix) or fnmatchcase(prefix, body) for prefix in prefixes):
            ignored = not negated
    return ignored


def _dockerignore() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_copied_file_exists_and_is_in_the_build_context(stages: list[Stage]) -> None:
    patterns = _dockerignore()
    for stage in stages:
        for copy in stage.all("COPY"):
            words = copy.words()
            if any(w.startswith("--from") for w in words):
                continue
            for source in words[:-1]:
                path = ROOT / source
                assert path.exists(), f"COPY {source}: no such file in the repository"
                files = [path] if path.is_file() else [p for p in path.rglob("*.py") if "__pycache__" not in p.parts]
                assert files, f"COPY {source}: nothing to copy"
                for file in files:
                    relative = file.relative_to(ROOT).as_posix()
                    assert not _ignored(relative, patterns), f"COPY {source}: .dockerignore excludes {relative}"


def test_build_context_leaves_out_what_the_image_does_not_need() -> None:
    patterns = _dockerignore()
    for path in (".venv/bin/python", ".git/HEAD", "tests/deploy/test_dockerfile.py", "deploy/overlays/dev/x.yaml"):
        assert _ignored(path, patterns), path
    assert _ignored("service/verdict/__pycache__/cli.cpython-313.pyc", patterns)
    assert not _ignored("service/verdict/cli.py", patterns)


def test_parser_reads_continuations_and_exec_forms() -> None:
    text = 'ARG BASE=img:1\nFROM ${BASE} AS one\n# c\nRUN a \\\n  && b\nFROM one\nENTRYPOINT ["x", "y"]\nCMD z\n'
    global_args, parsed = parse(text)
    assert global_args == {"BASE": "img:1"}
    assert [(s.base, s.name) for s in parsed] == [("img:1", "one"), ("one", "1")]
    assert parsed[0].run_text() == "a  && b"
    assert parsed[1].last("ENTRYPOINT").exec_form == ["x", "y"]
    assert parsed[1].last("CMD").exec_form is None


def test_base_config_is_valid_yaml_mapping() -> None:
    assert isinstance(yaml.safe_load((DEPLOY / "base" / "config.yaml").read_text(encoding="utf-8")), dict)
