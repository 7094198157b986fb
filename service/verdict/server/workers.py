"""One worker of `verdict.server.supervisor`: `python -m verdict.server.workers CONFIG_FILE`.

The supervisor starts each worker as a fresh interpreter running this module (not a user interface). A worker is the
single-process server (`lifecycle.serve`) with `reuse_port` on, so that every worker binds the same ports; it tells
the supervisor its ready record on stdout, and drains and exits when its stdin (a pipe from the supervisor) closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading

from verdict.config.sources import load_config

__all__: list[str] = []


def _worker_main(argv: list[str]) -> int:
    """`python -m verdict.server.workers CONFIG_FILE`: one worker, started by the supervisor (not a user interface)."""
    from verdict.server.lifecycle import serve
    from verdict.server.logs import configure_logging

    config = load_config(argv[0], env={})
    configure_logging(config.log_format, config.log_level)
    # stdin is a pipe from the supervisor: end of file means the supervisor is gone (even by SIGKILL), and a worker
    # without its supervisor drains and exits rather than serving on, unsupervised and unscraped.
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    return asyncio.run(serve(config, reuse_port=True, on_ready=_tell_supervisor))


def _tell_supervisor(ready: dict[str, object]) -> None:
    """The worker's ready line, on stdout: a pipe only the supervisor reads (the pod's logs get its one record)."""
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()


def _exit_with_parent() -> None:
    # The raw descriptor, not sys.stdin: a daemon thread blocked inside a buffered reader aborts interpreter exit.
    with contextlib.suppress(OSError):
        while os.read(0, 4096):
            pass
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
