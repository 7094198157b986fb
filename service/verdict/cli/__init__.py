"""`verdict serve | verify | evaluate | config`: the server, and the same checks from a shell without one.

- `main.py`: the arguments and `main`, the console entry point.
- `calls.py`: the call plumbing: the domain side in process, or the channel, metadata and RPCs of `--target`.
- `jobs.py`: `verify` and `evaluate` over many inputs, as a batch job in process or on a server.

The top of the house: it may use every layer, and nothing uses it.
"""

from __future__ import annotations

from verdict.cli.main import main

__all__ = ["main"]
