"""How many cores this process may use: the one count that sizes the workers (admission control's limits are per
worker, so they follow it).

Two counters that disagree (one reading only the root cgroup, one reading ancestors, cgroup v1 and the affinity mask)
would size things for different machines in a nested or v1 cgroup; there is one.
"""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path

__all__ = ["cpu_quota_cores"]


def cpu_quota_cores(cgroup_root: Path = Path("/sys/fs/cgroup"), proc_self: Path = Path("/proc/self")) -> int:
    """Cores this process may use: the container's CPU quota rounded up, never more than its CPU affinity, at least 1.

    cgroup v2 `cpu.max` ("QUOTA PERIOD" or "max PERIOD") of this process's cgroup and every ancestor (the tightest
    wins), else cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 means none); `os.sched_getaffinity` bounds it
    (a pinned process, or a machine with fewer cores than the quota). `os.cpu_count()` would report the host's cores,
    and on a 64-core node with a 2-CPU limit 64 workers would fight over 2 cores' worth of time.
    """
    affinity = len(os.sched_getaffinity(0))
    quotas = [*_cgroup_v2_quotas(cgroup_root, proc_self), *_cgroup_v1_quotas(cgroup_root)]
    cores = min([affinity, *(math.ceil(q) for q in quotas if q > 0)])
    return max(1, cores)


def _cgroup_v2_quotas(root: Path, proc_self: Path) -> list[float]:
    relative = ""
    with contextlib.suppress(OSError):
        for line in (proc_self / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                relative = line[3:].strip().lstrip("/")
    directory = root / relative if relative else root
    quotas = []
    while True:
        with contextlib.suppress(OSError, ValueError):
            quota, period = (directory / "cpu.max").read_text().split()[:2]
            if quota != "max":
                quotas.append(int(quota) / int(period))
        if directory == root or root not in directory.parents:
            break
        directory = directory.parent
    return quotas


def _cgroup_v1_quotas(root: Path) -> list[float]:
    for name in ("cpu,cpuacct", "cpu"):
        with contextlib.suppress(OSError, ValueError):
            quota = int((root / name / "cpu.cfs_quota_us").read_text())
            period = int((root / name / "cpu.cfs_period_us").read_text())
            return [quota / period] if quota > 0 and period > 0 else []
    return []
