"""VerifyResponse: structural checks on a model completion that never execute it.

`fences` finds the fenced blocks (CommonMark, linear), `languages` routes them, `python_syntax`, `json_syntax`,
`yaml_syntax` and `shell_syntax` judge them (pure), `rules` applies the verdict rules (pure), and `verifier.Verifier`
runs it all on the server: inline, in a process pool, or through `bash -n`. This package's own import stays light (no
grpc), because pool workers import the checkers.
"""
