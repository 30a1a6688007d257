"""Open project files so that a folder swapped for a symlink cannot lead outside the project.

`resolve_inside` checks a path once; a racing process could swap a folder for a symlink between
that check and the open (it leaked an outside file once in ~17,000 tries). Here the resolved,
project-relative path is opened from a descriptor of the project root with `openat2` and
`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`: the path was resolved already, so any symlink met now
is a swap, and the kernel refuses it. Where `openat2` is missing (Linux before 5.6, other
systems) each component is opened from its parent's descriptor with `O_NOFOLLOW`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import BinaryIO, NoReturn

from mzagent_tui.agent.ground import leftovers
from mzagent_tui.agent.ground.errors import ToolError

_SYS_OPENAT2 = 437  # the same number on x86_64 and aarch64
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None if sys.platform.startswith("linux") else False


def open_beneath(root: Path, relative: str, flags: int, mode: int = 0o666) -> int:
    """A descriptor for `relative` (already resolved, no symlinks) under `root`; ToolError if a
    component is a symlink now or the path leaves the root."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _open_at(root_fd, relative, flags | os.O_CLOEXEC, mode)
    finally:
        os.close(root_fd)


def _open_at(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    global _openat2_works
    if _openat2_works is not False:
        fd = _openat2(dir_fd, relative or ".", flags, mode)
        if fd >= 0:
            _openat2_works = True
            return fd
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:
            _openat2_works = False  # not in this kernel, or blocked by a seccomp filter
        else:
            _raise(code, relative, dir_fd)
    return _walk(dir_fd, relative, flags, mode)


def _openat2(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    ctypes.set_errno(0)
    result = libc.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(relative), ctypes.byref(how), ctypes.sizeof(how))
    return int(result)


def _walk(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    """The fallback: each folder opened from its parent with O_NOFOLLOW, never `..`."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ToolError("path.leaves", relative=relative)
    current = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            try:
                following = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            except OSError as exc:
                _raise(exc.errno or errno.EIO, relative, dir_fd)
            os.close(current)
            current = following
        if not parts:
            return os.dup(current)
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW, mode, dir_fd=current)
        except OSError as exc:
            _raise(exc.errno or errno.EIO, relative, dir_fd)
    finally:
        os.close(current)


def _file_on_the_way(dir_fd: int, relative: str) -> str | None:
    """The first folder of `relative` that is a regular file (not a link): a path through a file
    is the model's mistake, and must not be reported as a link swapped in."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    for end in range(1, len(parts) + 1):
        prefix = "/".join(parts[:end])
        try:
            mode = os.stat(prefix, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            return None
        if stat.S_ISREG(mode):
            return prefix
        if not stat.S_ISDIR(mode):
            return None
    return None


def _raise(code: int, relative: str, dir_fd: int) -> NoReturn:
    if code == errno.ENOTDIR and (blocking := _file_on_the_way(dir_fd, relative)) is not None:
        raise ToolError("path.file_in_the_way", blocking=blocking)
    if code in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):  # a link met with O_NOFOLLOW|O_DIRECTORY is ENOTDIR
        raise ToolError("path.swapped", relative=relative)
    if code == errno.ENOENT:
        raise FileNotFoundError(code, os.strerror(code), relative)
    raise OSError(code, os.strerror(code), relative)


def makedirs_beneath(root: Path, relative_dir: str) -> int:
    """Create the folders of `relative_dir` under root (none may be a link); return the last one's descriptor."""
    parts = [p for p in relative_dir.split("/") if p not in ("", ".")]
    current = open_beneath(root, "", os.O_RDONLY | os.O_DIRECTORY)
    for part in parts:
        try:
            os.mkdir(part, dir_fd=current)
        except FileExistsError:
            pass
        try:
            following = _open_at(current, part, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0)
        finally:
            os.close(current)
        current = following
    return current


def write_atomically_at(dir_fd: int, folder: Path, name: str, data: bytes, mode: int) -> None:
    """Write to a temp file in the same folder descriptor, fsync, rename: a kill at any moment
    leaves the old or the new file, never a truncated one. Where the kernel and file system
    allow, the file has no name while it is written (`O_TMPFILE`), so a kill mid-write leaves
    nothing behind; it is named only to be renamed over the target (linkat cannot replace a
    name). Any named temp file is noted first, so a later session removes what a kill left."""
    temp = f".{name}.{secrets.token_hex(4)}.mzagent-tmp"
    try:
        if not _write_unnamed(dir_fd, folder, temp, data, mode):
            _write_named(dir_fd, folder, temp, data, mode)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def _write_unnamed(dir_fd: int, folder: Path, temp: str, data: bytes, mode: int) -> bool:
    """Fill a nameless file and link it as `temp` once complete; False where `O_TMPFILE` or
    `/proc/self/fd` (how linkat names a descriptor without privileges) is missing."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return False
    try:
        fd = os.open(".", flag | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError:  # an older kernel (EISDIR) or a file system without it (EOPNOTSUPP)
        return False
    with os.fdopen(fd, "wb") as handle:
        _fill(handle, data, mode)
        leftovers.note(folder / temp)
        try:
            os.link(f"/proc/self/fd/{fd}", temp, dst_dir_fd=dir_fd, follow_symlinks=True)
        except FileNotFoundError:  # no /proc
            return False
    return True


def _write_named(dir_fd: int, folder: Path, temp: str, data: bytes, mode: int) -> None:
    leftovers.note(folder / temp)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as handle:
        _fill(handle, data, mode)


def _fill(handle: BinaryIO, data: bytes, mode: int) -> None:
    handle.write(data)
    handle.flush()
    os.fchmod(handle.fileno(), mode)
    os.fsync(handle.fileno())
