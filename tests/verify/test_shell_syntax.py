"""Reading `bash -n`'s answer (pure: bash's real output, captured from bash 5.2) and preparing transcripts."""

from __future__ import annotations

import pytest

from verdict.verify.model import CodeCheck, Verdict
from verdict.verify.shell_syntax import BASH_ARGV, interpret_bash, shell_script
from verdict.verify.snippet import Snippet

OK, TRUNCATED, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.TRUNCATED, Verdict.MALFORMED, Verdict.UNVERIFIABLE


def test_bash_parses_only_from_stdin_with_extglob_and_no_startup_files() -> None:
    assert BASH_ARGV == ("bash", "--norc", "--noprofile", "-O", "extglob", "-n", "/dev/stdin")


def test_exit_zero_is_ok() -> None:
    assert interpret_bash(Snippet("echo hi\n"), 0, "") == CodeCheck(OK)


def test_a_syntax_error_is_malformed_with_bashs_message_and_line() -> None:
    stderr = "/dev/stdin: line 3: syntax error near unexpected token `fi'\n/dev/stdin: line 3: `fi'\n"
    assert interpret_bash(Snippet("echo a\necho b\nfi\n"), 2, stderr) == CodeCheck(
        MALFORMED, "syntax error near unexpected token `fi'", 3
    )


def test_a_line_past_the_end_is_the_last_line() -> None:
    stderr = "/dev/stdin: line 5: syntax error: unexpected end of file\n"
    script = Snippet("if true; then\n  echo a\n  echo b\n")
    assert interpret_bash(script, 2, stderr) == CodeCheck(MALFORMED, "syntax error: unexpected end of file", 3)


def test_an_unterminated_heredoc_is_truncated_at_its_start_though_bash_exits_zero() -> None:
    stderr = "/dev/stdin: line 3: warning: here-document at line 2 delimited by end-of-file (wanted `EOF')\n"
    assert interpret_bash(Snippet("echo a\ncat <<EOF\nhello\n"), 0, stderr) == CodeCheck(
        TRUNCATED, "here-document delimited by end-of-file (wanted `EOF')", 2
    )


@pytest.mark.parametrize(("code", "rc"), [("make build && \\\n", 2), ("docker run \\\n  -it \\\n", 0)])
def test_a_trailing_line_continuation_is_truncated(code: str, rc: int) -> None:
    result = interpret_bash(Snippet(code), rc, "")
    assert result.verdict is TRUNCATED
    assert result.line == code.rstrip("\n").count("\n") + 1


@pytest.mark.parametrize("code", ["echo done \\\\\n", "# a comment ending in \\\n", "echo a\\ \n"])
def test_an_escaped_backslash_or_a_comment_is_not_a_continuation(code: str) -> None:
    assert interpret_bash(Snippet(code), 0, "").verdict is OK


def test_a_placeholder_on_the_failing_line_is_unverifiable() -> None:
    stderr = "/dev/stdin: line 1: syntax error near unexpected token `newline'\n/dev/stdin: line 1: `npm <command>'\n"
    result = interpret_bash(Snippet("npm <command>\n"), 2, stderr)
    assert result.verdict is UNVERIFIABLE
    assert "'<command>'" in result.detail
    assert result.line == 1


def test_a_heredoc_is_not_a_placeholder() -> None:
    stderr = "/dev/stdin: line 2: syntax error near unexpected token `)'\n"
    assert interpret_bash(Snippet("cat <<EOF\n)\n"), 2, stderr).verdict is MALFORMED


def test_a_crash_is_unverifiable_with_its_signal() -> None:
    result = interpret_bash(Snippet("echo $($($(x)))\n"), -11, "", signal_name="SIGSEGV")
    assert result == CodeCheck(UNVERIFIABLE, "bash crashed (SIGSEGV) while parsing; the block was not checked")


def test_running_out_of_time_is_unverifiable() -> None:
    assert interpret_bash(Snippet("echo\n"), None, "", timed_out=True).verdict is UNVERIFIABLE


def test_bash_unable_to_read_the_script_is_unverifiable() -> None:
    result = interpret_bash(Snippet("echo\n"), 127, "bash: /dev/stdin: No such file or directory\n")
    assert result.verdict is UNVERIFIABLE
    assert "exit 127" in result.detail


class TestTranscripts:
    def test_a_script_is_passed_as_written(self) -> None:
        assert shell_script("set -e\nmake\n") == Snippet("set -e\nmake\n")

    def test_prompted_commands_are_kept_and_output_dropped(self) -> None:
        script = shell_script(
            "$ pip install verdict\nCollecting verdict\nSuccessfully installed verdict-0.1.0\n$ verdict --help\n"
        )
        assert script.text == "pip install verdict\nverdict --help\n"
        assert script.origin == (1, 4)

    def test_continuations_and_secondary_prompts_stay_with_their_command(self) -> None:
        script = shell_script("$ docker run \\\n    -p 8080:80 nginx\nabc123\n$ cat <<EOF\n> hello\n> EOF\nhello\n")
        assert script.text == "docker run \\\n    -p 8080:80 nginx\ncat <<EOF\nhello\nEOF\n"
        assert script.origin == (1, 2, 4, 5, 6)

    def test_an_error_in_a_transcript_names_the_response_line(self) -> None:
        script = shell_script("$ echo ok\nok\n$ if true; then echo\n")
        stderr = "/dev/stdin: line 3: syntax error: unexpected end of file\n"
        result = interpret_bash(script, 2, stderr)
        assert result == CodeCheck(
            MALFORMED, "syntax error: unexpected end of file ($ prompts removed, output lines dropped)", 3
        )


class TestHeredocsInTranscripts:
    """A here-document typed after a `$ ` prompt is input, not output, whether or not its lines carry `> `."""

    def test_an_unprompted_heredoc_body_and_its_delimiter_are_kept(self) -> None:
        script = shell_script("$ cat > app.env <<EOF\nPORT=8080\nEOF\n$ ls\napp.env\n")
        assert script.text == "cat > app.env <<EOF\nPORT=8080\nEOF\nls\n"
        assert script.origin == (1, 2, 3, 4)

    def test_quoted_dashed_and_stacked_delimiters_are_followed(self) -> None:
        script = shell_script("$ cat <<-'END' <<\"MORE\"\n\tone\n\tEND\ntwo\nMORE\nout\n$ ls\n")
        assert script.origin == (1, 2, 3, 4, 5, 7)

    @pytest.mark.parametrize(
        "line",
        [
            '$ echo "no <<heredoc here"\n',
            "$ cat <<<'a here-string'\n",
            "$ ls  # <<EOF\n",
            "$ echo $((1 << 4))\n",
            "$ (( mask = 1<<bit ))\n",
        ],
    )
    def test_quoted_here_strings_and_comments_open_no_heredoc(self, line: str) -> None:
        assert shell_script(line + "output\n$ ls\n").origin == (1, 3)

    def test_a_heredoc_that_never_ends_is_still_truncated(self) -> None:
        script = shell_script("$ cat <<EOF\nline one\n")
        assert script.text == "cat <<EOF\nline one\n"


class TestContinuationsAndComments:
    @pytest.mark.parametrize(
        "code",
        [
            "cd C:\\\\  # a Windows path: C:\\\n",
            "echo done;# trailing \\\n",
            "make  # see docs\\\n",
        ],
    )
    def test_a_backslash_ending_a_comment_is_not_a_continuation(self, code: str) -> None:
        assert interpret_bash(Snippet(code), 0, "").verdict is OK

    @pytest.mark.parametrize("code", ["echo ${#args} \\\n", "echo '#' \\\n", "echo a#b \\\n", 'echo "# not" \\\n'])
    def test_a_hash_that_starts_no_comment_leaves_the_continuation(self, code: str) -> None:
        assert interpret_bash(Snippet(code), 0, "").verdict is TRUNCATED


@pytest.mark.parametrize(
    ("code", "placeholder"),
    [
        ("cat <path/to/file>\n", "<path/to/file>"),
        ("gh repo clone <owner/repo>\n", "<owner/repo>"),
        ("docker run <image:tag>\n", "<image:tag>"),
        ("ssh <user@host>\n", "<user@host>"),
    ],
)
def test_placeholders_with_paths_colons_and_at_signs_are_unverifiable(code: str, placeholder: str) -> None:
    stderr = f"/dev/stdin: line 1: syntax error near unexpected token `newline'\n/dev/stdin: line 1: `{code.strip()}'\n"
    result = interpret_bash(Snippet(code), 2, stderr)
    assert result.verdict is UNVERIFIABLE
    assert repr(placeholder) in result.detail


class TestExcusesStandWhereTheErrorIs:
    """A placeholder or another language excuses bash's error only on the line bash blamed, outside quotes."""

    def test_a_placeholder_in_quotes_on_the_blamed_line_excuses_nothing(self) -> None:
        script = Snippet('echo "use <name> here" )\n')
        stderr = "/dev/stdin: line 1: syntax error near unexpected token `)'\n"
        assert interpret_bash(script, 2, stderr).verdict is Verdict.MALFORMED

    def test_a_placeholder_on_another_line_excuses_nothing(self) -> None:
        script = Snippet("npm <command>\nif true; then\n  echo hi\n")
        stderr = "/dev/stdin: line 4: syntax error: unexpected end of file\n"
        assert interpret_bash(script, 2, stderr).verdict is Verdict.MALFORMED

    def test_an_error_without_a_line_excuses_nothing(self) -> None:
        script = Snippet("npm <command>\n")
        assert interpret_bash(script, 2, "bash: syntax error\n").verdict is Verdict.MALFORMED

    @pytest.mark.parametrize(
        ("code", "stderr", "language"),
        [
            (
                "def main():\n    print('hi')\n",
                "/dev/stdin: line 1: syntax error near unexpected token `('\n",
                "Python",
            ),
            (
                "foreach ($f in Get-ChildItem) {\n  Write-Host $f\n}\n",
                "/dev/stdin: line 1: syntax error near unexpected token `$f'\n",
                "PowerShell",
            ),
            (
                "const add = (a, b) => { return a + b; };\n",
                "/dev/stdin: line 1: syntax error near unexpected token `('\n",
                "JavaScript",
            ),
        ],
    )
    def test_another_language_on_the_blamed_line_is_unverifiable(self, code: str, stderr: str, language: str) -> None:
        result = interpret_bash(Snippet(code), 2, stderr)
        assert result.verdict is Verdict.UNVERIFIABLE
        assert result.detail.startswith(f"not shell: {language}")

    def test_a_lookalike_in_quotes_is_malformed(self) -> None:
        script = Snippet('echo "def main():" (\n')
        stderr = "/dev/stdin: line 1: syntax error near unexpected token `('\n"
        assert interpret_bash(script, 2, stderr).verdict is Verdict.MALFORMED


class TestStubs:
    """A body of nothing but comments is a stub: bash rejects it, and it would hide every error after it."""

    @pytest.mark.parametrize(
        ("code", "header"),
        [
            ("deploy() {\n  # TODO: push the image\n}\ndeploy\n", 1),
            ("if [ -f x ]; then\n  # handle the file\nfi\n", 1),
            ("for f in *.log; do\n  # compress each log\ndone\n", 1),
            ("if ok; then\n  echo yes\nelse\n  # nothing yet\nfi\n", 3),
        ],
    )
    def test_a_comment_only_body_is_filled_and_recorded(self, code: str, header: int) -> None:
        script = shell_script(code)
        assert script.stubs == (header,)
        assert script.text.count("\n") == code.count("\n")
        result = interpret_bash(script, 0, "")
        assert (result.verdict, result.line) == (UNVERIFIABLE, header)
        assert result.detail.startswith("a stub")

    def test_an_error_beside_a_stub_is_still_malformed(self) -> None:
        script = shell_script("f() {\n  # TODO\n}\necho $(\n")
        stderr = "/dev/stdin: line 5: unexpected EOF while looking for matching `)'\n"
        assert interpret_bash(script, 2, stderr).verdict is MALFORMED

    @pytest.mark.parametrize(
        "code",
        ["f() {\n}\n", "cat <<EOF\n{\n# a comment in the data\n}\nEOF\n", "if x; then\n  run # go\nfi\n"],
        ids=["an empty body", "a here-document", "code with a comment"],
    )
    def test_no_stub_without_a_comment_only_body(self, code: str) -> None:
        assert shell_script(code).stubs == ()
