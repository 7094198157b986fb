"""YAML blocks: application tags and multi-document streams are well-formed; syntax errors are malformed."""

from __future__ import annotations

import pytest
import yaml

from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.yaml_syntax import check_yaml

OK, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.MALFORMED, Verdict.UNVERIFIABLE

CLOUDFORMATION = """AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Env:
    Type: String
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub "logs-${Env}"
      Tags:
        - Key: Owner
          Value: !Ref AWS::AccountId
Outputs:
  Arn:
    Value: !GetAtt Bucket.Arn
    Condition: !And [!Equals [!Ref Env, prod], !Not [!Equals [!Ref Env, dev]]]
"""

GITLAB_CI = """.setup:
  script:
    - pip install -e .
test:
  script:
    - !reference [.setup, script]
    - pytest
"""

LM_EVAL_TASK = """task: arc_easy
dataset_path: allenai/ai2_arc
process_docs: !function utils.process_docs
doc_to_text: "Question: {{question}}\\nAnswer:"
"""

GCLOUD = """request:
  collection: compute.instances
  method: !REF googlecloudsdk.command_lib.compute.hooks:Method
"""

KUBERNETES = """apiVersion: v1
kind: Service
metadata:
  name: verdict
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: verdict
spec:
  replicas: 2
"""


@pytest.mark.parametrize(
    "code",
    [CLOUDFORMATION, GITLAB_CI, LM_EVAL_TASK, GCLOUD, KUBERNETES],
    ids=["cloudformation !Ref !Sub !GetAtt", "gitlab !reference", "lm-eval !function", "gcloud !REF", "multi-doc"],
)
def test_real_documents_with_application_tags_and_several_documents_parse(code: str) -> None:
    with pytest.raises(yaml.YAMLError):
        list(yaml.safe_load_all(code)) if "!" in code else yaml.safe_load(code)
    assert check_yaml(code) == CodeCheck(OK)


def test_a_python_object_tag_is_plain_data_never_constructed() -> None:
    assert check_yaml("x: !!python/object/apply:os.system [echo owned]\n") == CodeCheck(OK)


@pytest.mark.parametrize(
    ("code", "message", "line"),
    [
        (
            "spec:\n  replicas: 2\n containers: []\n",
            "while parsing a block mapping: did not find expected key (column 2)",
            3,
        ),
        ("a: b: c\n", "mapping values are not allowed in this context (column 5)", 1),
        ("key: [1, 2\nother: 3\n", "while parsing a flow sequence: did not find expected ',' or ']' (column 6)", 2),
        ('name: "unterminated\n', "while scanning a quoted scalar: found unexpected end of stream (column 1)", 2),
        ("a: *missing\n", "found undefined alias (column 4)", 1),
    ],
)
def test_syntax_errors_are_malformed_with_the_parsers_words_and_line(code: str, message: str, line: int) -> None:
    assert check_yaml(code) == CodeCheck(MALFORMED, message, line)


def test_a_tab_indent_is_malformed() -> None:
    result = check_yaml("a:\n\t- b\n")
    assert (result.verdict, result.line) == (MALFORMED, 2)
    assert result.detail.startswith("while scanning for the next token: found character")


def test_a_control_character_is_malformed() -> None:
    assert check_yaml("a: b\x07\n") == CodeCheck(
        MALFORMED, "unacceptable character #x0007: control characters are not allowed", 1
    )


@pytest.mark.parametrize(
    "code",
    ["? [a, b]\n: pair\n", "base: &b {a: 1}\nmerged:\n  <<: 1\n", "when: 2001-13-45\n", "data: !!binary 'zz'\n"],
    ids=["unhashable key", "bad merge", "impossible date", "bad base64"],
)
def test_well_formed_yaml_pyyaml_cannot_construct_is_unverifiable(code: str) -> None:
    result = check_yaml(code)
    assert result.verdict is UNVERIFIABLE
    assert "well-formed" in result.detail


def test_a_redefined_anchor_is_unverifiable() -> None:
    result = check_yaml("a: &x 1\nb: &x 2\nc: *x\n")
    assert result.verdict is UNVERIFIABLE
    assert result.line == 2


def test_a_helm_template_is_unverifiable() -> None:
    template = "spec:\n  {{- if .Values.replicas }}\n  replicas: {{ .Values.replicas }}\n  {{- end }}\n"
    result = check_yaml(template)
    assert result.verdict is UNVERIFIABLE
    assert "template" in result.detail


@pytest.mark.parametrize(
    "code",
    ["[" * 100_000 + "]" * 100_000, "- " * 50_000 + "x\n", "".join("  " * i + "k:\n" for i in range(3000))],
    ids=["flow", "block sequence", "block mapping"],
)
def test_deep_nesting_is_unverifiable(code: str) -> None:
    result = check_yaml(code)
    assert result.verdict is UNVERIFIABLE
    assert "gave up" in result.detail


def test_a_lone_surrogate_is_unverifiable() -> None:
    assert check_yaml("s: '\ud800'\n").verdict is UNVERIFIABLE


@pytest.mark.parametrize("code", ["enabled: !!bool maybe\n", "when: !!timestamp soon\n"])
def test_an_explicit_core_tag_on_a_value_it_cannot_take_is_unverifiable_without_raising(code: str) -> None:
    """PyYAML's constructors raise KeyError / AttributeError here, which escaped the "never raises" checker."""
    result = check_yaml(code)
    assert result.verdict is Verdict.UNVERIFIABLE
    assert result.detail.startswith("well-formed, but PyYAML cannot construct a value")


class TestTemplatesOnlyWhereTheErrorIs:
    """A template marker excuses a YAML error only where it stands, outside quoted scalars; `${{ }}` is YAML."""

    def test_quoted_jinja_in_an_lm_eval_task_excuses_an_unrelated_error(self) -> None:
        task = 'task: arc\ndoc_to_text: "Question: {{question}}\\nAnswer:"\ndoc_to_choice: [A, B\n'
        result = check_yaml(task)
        assert result.verdict is MALFORMED
        assert result.line == 4

    def test_an_error_far_from_an_unquoted_marker_is_malformed(self) -> None:
        assert check_yaml("name: {{ .Values.name }}\nlabels:\n  app: web\nports: [80, 443\n").verdict is MALFORMED

    @pytest.mark.parametrize(
        "code",
        [
            "spec:\n  {{- if .Values.replicas }}\n  replicas: 2\n  {{- end }}\n",
            "{% for host in hosts %}\n- {{ host }}\n{% endfor %}\n",
            "key: value\nother: {{ var }} and more\n",
        ],
        ids=["helm", "jinja statement", "jinja expression mid-value"],
    )
    def test_a_template_failing_at_its_marker_is_unverifiable(self, code: str) -> None:
        result = check_yaml(code)
        assert result.verdict is UNVERIFIABLE
        assert result.detail.startswith("a template")

    def test_github_actions_expressions_are_yaml(self) -> None:
        workflow = "on: push\njobs:\n  build:\n    if: ${{ github.event_name == 'push' }}\n    steps:\n"
        assert check_yaml(workflow + "      - run: echo ${{ github.sha }}\n").verdict is OK
        assert check_yaml(workflow + "      - run: [echo ${{ github.sha }}\n").verdict is MALFORMED
