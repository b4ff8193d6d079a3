"""Files written whole, and files read without waiting.

:func:`write_atomically`: a reader of the final name sees the old content or
all of the new, never a part (a kill, a full disk or an error half way).
:func:`read_regular`: only a regular file is read; a FIFO or a device given
where a file is expected is refused at once instead of blocking the program.

Used for every file acres_sim writes in one go: the recorder's report,
``episode.json`` and manifest, ``config convert`` / ``config docs -o`` and
``up --print-nodes DIR``'s parameter files.
"""

import errno
import fcntl
import os
from pathlib import Path
import stat

__all__ = ['NotARegularFile', 'claim_lock', 'part_name', 'read_regular', 'try_lock',
           'write_atomically']


class NotARegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder."""


def read_regular(path) -> bytes:
    """The bytes of ``path``, a regular file (else NotARegularFile; other
    OSErrors as ``open`` raises them)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)       # a FIFO opens without a writer
    with os.fdopen(fd, 'rb') as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise NotARegularFile(f'{path} is not a regular file')
        return file.read()


def part_name(path) -> Path:
    """The temporary name a file is written under before it is renamed."""
    path = Path(path)
    return path.with_name(f'.{path.name}.part')


def write_atomically(path, data: bytes, write=None) -> None:
    """``path`` gets all of ``data`` or keeps what it had: written to
    :func:`part_name`, synced, renamed.  ``write(part_path)`` instead of data
    writes the temporary file itself (e.g. a picture).  A failure removes the
    part file and raises."""
    path = Path(path)
    part = part_name(path)
    try:
        if write is not None:
            write(part)
        else:
            with open(part, 'wb') as f:
                f.write(data)
        with open(part, 'rb') as f:
            os.fsync(f.fileno())
        os.replace(part, path)
    except BaseException:
        try:
            part.unlink()
        except OSError:
            pass
        raise


def try_lock(path):
    """Lock the file ``path`` (made if need be) for this process, without
    waiting (``fcntl.flock``): (its descriptor, None), or (None, the pid its
    holder wrote into it) when another process holds it.  OSError otherwise."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        holder = os.read(fd, 64).decode('ascii', 'replace').strip() or '?'
        os.close(fd)
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None, holder
        raise
    return fd, None


def claim_lock(fd):
    """Write this process's pid into the lock file held on ``fd``."""
    os.ftruncate(fd, 0)
    os.write(fd, f'{os.getpid()}\n'.encode('ascii'))
