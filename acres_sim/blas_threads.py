"""numpy's BLAS on one thread in acres_sim's processes: the command line's and
the nodes'.

numpy's OpenBLAS starts a pool of worker threads when numpy is imported, and
an idle worker spins on its core for about 0.1 s before it sleeps: 0.1 s of
CPU in each process the command starts (the recorder starts four), at the
moment they all start up on two cores.  The command's linear algebra is on
small matrices (3x3 to 6x6 in the models; the 3xN by Nx3 products of an
alignment in ``evaluate``, milliseconds), where a second thread gains next to
nothing.  Importing this module sets ``OPENBLAS_NUM_THREADS=1`` unless
the environment sets it already; it must come before numpy's import.  The
command line (:mod:`acres_sim.cli`) and every node process
(:mod:`acres_sim.ros`, whose package a node imports first) import it; the
command's child processes (the recorder's writers) inherit it.
"""

import os

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
