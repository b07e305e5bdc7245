"""How much memory this process's control group still allows: cgroup v1 and v2.

Inside a container ``/proc/meminfo`` shows the host: in a 3 GiB memory cgroup it read 21.7 GiB
available, and a benchmark sized by it was killed by the kernel. The limit that counts is the smallest
headroom of this process's memory cgroup and each of its ancestors: the limit (v2 ``memory.max``, v1
``memory.limit_in_bytes``) minus what is used and cannot be reclaimed (usage minus the inactive file
cache, as ``docker stats`` counts it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

# v1 reports "no limit" as the largest page-aligned 64-bit number; anything this large is no limit.
_UNLIMITED = 2**60


@dataclass(frozen=True)
class CgroupFiles:
    """The names of a memory cgroup version's files: limit, usage, and the stat key of the inactive
    file cache (reclaimable, so not counted as used)."""

    limit: str
    usage: str
    inactive_file: str


V1 = CgroupFiles("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
V2 = CgroupFiles("memory.max", "memory.current", "inactive_file")


def memory_headroom_bytes(root: str = "/") -> int | None:
    """Bytes this process's memory cgroups still allow (the smallest over the cgroup and its
    ancestors), or None where no limit applies or none can be read. ``root`` prefixes every path read
    (``/proc/self/...`` and the cgroup mounts), so a test can lay out a cgroup tree of its own."""
    try:
        with open(os.path.join(root, "proc/self/mountinfo"), encoding="utf-8") as mountinfo:
            mounts = mountinfo.read()
        with open(os.path.join(root, "proc/self/cgroup"), encoding="utf-8") as cgroup:
            membership = cgroup.read()
    except OSError:
        return None
    headrooms = [
        _headroom(directory, files) for directory, files in cgroup_directories(mounts, membership, root)
    ]
    known = [h for h in headrooms if h is not None]
    return min(known) if known else None


def cgroup_directories(mountinfo: str, membership: str, root: str = "/") -> Iterator[tuple[str, CgroupFiles]]:
    """This process's memory cgroup directories, innermost first, then each ancestor up to the mount,
    from the text of ``/proc/self/mountinfo`` and ``/proc/self/cgroup``."""
    paths = _cgroup_paths(membership)
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        fstype, _, options = line.split(" - ", 1)[1].partition(" ")
        mount_root, mount_point = fields[3], fields[4]
        if fstype == "cgroup2" and "v2" in paths:
            version, path = V2, paths["v2"]
        elif fstype == "cgroup" and "memory" in options.split()[-1].split(",") and "v1" in paths:
            version, path = V1, paths["v1"]
        else:
            continue
        relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
        directory = os.path.normpath(os.path.join(root, mount_point.lstrip("/"), relative))
        top = os.path.normpath(os.path.join(root, mount_point.lstrip("/")))
        while True:
            if os.path.exists(os.path.join(directory, version.limit)):
                yield directory, version
            if directory == top or not directory.startswith(top):
                break
            directory = os.path.dirname(directory)


def _cgroup_paths(membership: str) -> dict[str, str]:
    """{"v1": path of the memory controller's cgroup, "v2": path of the unified cgroup}."""
    paths = {}
    for line in membership.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and controllers == "":
            paths["v2"] = path
        elif "memory" in controllers.split(","):
            paths["v1"] = path
    return paths


def _headroom(directory: str, files: CgroupFiles) -> int | None:
    """Limit minus unreclaimable usage of one cgroup; None when it has no limit."""
    limit = _read_number(os.path.join(directory, files.limit))
    if limit is None or limit >= _UNLIMITED:
        return None
    usage = _read_number(os.path.join(directory, files.usage)) or 0
    inactive = _stat(os.path.join(directory, "memory.stat"), files.inactive_file)
    return max(0, limit - max(0, usage - inactive))


def _read_number(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _stat(path: str, key: str) -> int:
    try:
        with open(path, encoding="utf-8") as file:
            for line in file:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        return 0
    return 0
