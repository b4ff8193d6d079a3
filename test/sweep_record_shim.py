"""``acres-sim record`` for the sweep tests while the recorder may not know
``--no-bag`` / ``--no-report`` yet (they come with the recorder's branch):
the options it does not know are left out, so the run writes its bag and
report; the rows, and so the digests, are the same either way.  Run as
``python sweep_record_shim.py record ...``."""

import dataclasses
import sys

from acres_sim.cli import main
from acres_sim.record.runner import RecordRequest

_FIELDS = {f.name for f in dataclasses.fields(RecordRequest)}
_OPTIONS = {'--no-bag': 'bag', '--no-report': 'report'}

if __name__ == '__main__':
    argv = [a for a in sys.argv[1:] if a not in _OPTIONS or _OPTIONS[a] in _FIELDS]
    sys.exit(main(argv))
