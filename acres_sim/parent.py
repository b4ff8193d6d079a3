"""A node ends with the process that started it.

``ros2 launch`` stopped with SIGTERM leaves its nodes running (ros2/launch#666),
and so does any parent that is killed.  On Linux a node asks the kernel for
SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG), which then stops it the
way a Ctrl-C does; :func:`parent_gone` covers a parent that died before that
request (the node was handed to another parent meanwhile).  ``acres-sim up``
sets the same in its children before they run (:func:`end_with_parent` as the
``preexec_fn``, given its own pid: a parent that dies between the fork and the
request would send no signal, so the child checks after asking and ends at
once if it has another parent already).

The kernel sends the signal when the *thread* that started the node ends, so a
program that starts nodes must do it from a thread that lives as long as they
should (the main thread, as up, ros2 launch and ros2 run do).  A node started
from a shell ends with that shell (``nohup`` does not keep it; ``setsid -f`` or a
service manager does).
"""

import os
import signal
import sys

__all__ = ['PARENT_AT_START', 'end_with_parent', 'parent_gone']

PR_SET_PDEATHSIG = 1
PARENT_AT_START = os.getppid()    # imported early by acres_sim.ros: the node's first parent


def end_with_parent(parent=None):
    """SIGTERM to this process when its parent dies (Linux; elsewhere nothing).
    ``parent``: the pid of the process that started this one (as a
    ``preexec_fn``: the starter's pid, bound before the fork); if this process
    has another parent already, that one died before the request could
    take effect, and this process ends at once (status 1, before it runs
    anything)."""
    if sys.platform.startswith('linux'):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def parent_gone(parent=None):
    """Whether the parent this process had at start (``parent``, default the
    one seen when this module was imported) has died: it has another parent now."""
    return os.getppid() != (PARENT_AT_START if parent is None else parent)
