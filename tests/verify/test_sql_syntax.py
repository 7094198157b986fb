"""SQL through sqlglot: intact statements of each shape are ok, the error kinds every dialect shares are malformed,
other refusals are unverifiable, and hostile input gets a verdict."""

from __future__ import annotations

import pytest

from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline
from verdict.verify.sql_syntax import COMMON_DIALECTS, check_sql, check_sql_dialect

INTACT = [
    "SELECT u.id, count(*) AS n\nFROM users u\nJOIN orders o ON o.user_id = u.id\nWHERE o.total > 100\n"
    "GROUP BY u.id\nORDER BY n DESC\nLIMIT 10;\n",
    "CREATE TABLE users (\n  id SERIAL PRIMARY KEY,\n  email TEXT NOT NULL UNIQUE\n);\n",
    "WITH recent AS (SELECT * FROM events WHERE at > now() - interval '1 day')\nSELECT kind, count(*) FROM recent "
    "GROUP BY kind;\n",
    "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'it''s');\nUPDATE t SET b = 'y' WHERE a = 1;\n"
    "DELETE FROM t WHERE a = 2;\n",
    "\\echo Use CREATE EXTENSION to load this file\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\n",
]

BROKEN = [
    ("SELECT a, b FROM t WHERE (a = 1;\n", "'(' was never closed"),
    ("SELECT 'abc FROM t;\n", "unterminated string"),
    ("SELECT a FROM t WHERE\n", "stops in the middle"),
    ("SELECT a FROM t;\nINSERT INTO t VALUES (1, 2\n", "'(' was never closed"),
    ("UPDATE t SET a = 1 WHERE id IN (SELECT id FROM u));\n", "unmatched ')'"),
]


@pytest.mark.parametrize("code", INTACT)
def test_intact_sql_is_ok(code: str) -> None:
    assert check_sql(code).verdict is Verdict.OK, check_sql(code)


@pytest.mark.parametrize(("code", "detail"), BROKEN)
def test_error_kinds_of_every_dialect_are_malformed(code: str, detail: str) -> None:
    result = check_sql(code)
    assert result.verdict is Verdict.MALFORMED, result
    assert detail in result.detail


def test_a_refusal_of_no_known_kind_is_unverifiable() -> None:
    result = check_sql("SELEC a FROM t\n")
    assert result.verdict is Verdict.UNVERIFIABLE
    assert "vendor syntax" in result.detail


def test_the_tag_names_the_dialect() -> None:
    """MySQL's backquoted names are MySQL; PostgreSQL's reading of the same text is not the one a mysql tag asks."""
    code = "SELECT `name` FROM `users` WHERE `id` = 1;\n"
    assert check_sql_dialect(("mysql",), code).verdict is Verdict.OK
    answer = verify_offline(f"Try:\n\n```mysql\n{code}```\n")
    assert (answer.verdict, answer.checks[0].language) == (Verdict.OK, "mysql")
    assert verify_offline("x\n\n```postgresql\nSELECT (1;\n```\n").verdict is Verdict.MALFORMED


def test_plain_sql_tries_the_common_dialects() -> None:
    assert "postgres" in COMMON_DIALECTS
    assert "tsql" in COMMON_DIALECTS
    assert check_sql("SELECT TOP 5 name FROM users;\n").verdict is Verdict.OK  # T-SQL only


def test_hostile_input_gets_a_verdict() -> None:
    assert check_sql("SELECT " + "(" * 2000 + "1" + ")" * 2000 + ";").verdict is not Verdict.MALFORMED
    assert check_sql("SELECT " + "(" * 2000 + "1;").verdict is Verdict.MALFORMED
    assert check_sql("SELECT 1\x00;").verdict is Verdict.MALFORMED
