"""Files written whole: a reader of the final name sees the old content or all
of the new, never a part (a kill, a full disk or an error half way).

Used for every file acres_sim writes in one go: the recorder's report,
``episode.json`` and manifest, ``config convert`` / ``config docs -o`` and
``up --print-nodes DIR``'s parameter files.
"""

import os
from pathlib import Path

__all__ = ['part_name', 'write_atomically']


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
