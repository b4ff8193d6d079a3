"""The numba kernels compiled (or loaded from numba's cache) before they are timed.

A kernel compiles on its first call; ``cache=True`` keeps the result on disk
(next to the sources, or in ``NUMBA_CACHE_DIR``) for the next process.  Cold,
the block kernel alone takes 10-20 s on a small machine: a node that met it
inside its paced loop would publish that long late and then in a burst.  So
each node runs its kernels once on throwaway models before it starts
(:func:`warmed`), and ``make setup`` runs ``python -m acres_sim.warmup``,
which does the same for every kernel of the recorder and the nodes, so the
first run after an install finds them cached, and writes the package's
bytecode (:func:`compile_package`).  Where the kernels compiled ahead of
time are current (:mod:`acres_sim.aot`), a node's warm-up runs those and
compiles nothing; it still runs, so that a kernel they lack is met before the
clock starts (and ``python -m acres_sim.aot`` builds from these warm-ups).
"""

import os
import sys
import time

import numpy as np

__all__ = ['cached', 'compile_package', 'main', 'warm_block', 'warm_gnss', 'warm_heading',
           'warm_imu', 'warm_rig', 'warm_step_sensors', 'warm_truth', 'warmed']


def cached(kernel):
    """Whether numba has a cache index for ``kernel`` (a numba dispatcher);
    True for anything else.  A cheap look at one file, so only a hint."""
    cache_file = getattr(getattr(kernel, '_cache', None), '_cache_file', None)
    index = getattr(cache_file, '_index_path', None)
    return index is None or os.path.exists(index)


def warmed(log, kernels, warm):
    """Call ``warm()``, which runs ``kernels`` (numba dispatchers) once; when one
    has no cache yet, say first (``log(text)``) that they are being compiled,
    and after, in how long."""
    if all(cached(k) for k in kernels):
        warm()
        return
    log('compiling kernels (first run only: numba caches them) ...')
    start = time.monotonic()
    warm()
    log(f'kernels ready, compiled in {time.monotonic() - start:.1f} s')


def warm_block(simulation):
    """Three steps of a throwaway RigSimulation (the block kernel, and the GNSS
    epochs if it has a receiver)."""
    simulation.advance(3)


def warm_gnss(receiver, antenna_arm):
    """The antenna placed by its lever arm ``antenna_arm`` (what the GNSS node
    does per epoch), one epoch of ``receiver``, which is then reset; the 95 %
    radii of GPSFix."""
    from acres_sim.core.frames import point_at_lever_arm
    from acres_sim.core.gnss.accuracy import spherical_radius_95

    point_at_lever_arm(np.zeros(3), np.eye(3), antenna_arm)
    receiver.epoch_records(np.zeros(1), np.zeros((1, 3)))
    receiver.reset()
    spherical_radius_95(0.01, 0.01, 0.02)      # vertical sigma the larger (the integral)
    spherical_radius_95(0.02, 0.02, 0.01)      # and the smaller (closed form)


def warm_heading(heading):
    """One epoch of a dual-antenna ``heading``, which is then reset."""
    heading.epoch_records(np.array([[0.0, 0.0, 0.0, 1.0]]), np.zeros(1, dtype=np.int64))
    heading.reset()


def warm_imu(imu):
    """Three difference steps and a sample of ``imu``, which is then reset."""
    from acres_sim.core.truth import Truth

    at_rest = Truth(step=0, p=np.zeros(3), R=np.eye(3), v=np.zeros(3), w=np.zeros(3),
                    p_c=np.zeros(3))
    for k in range(3):
        imu.physics_step(at_rest._replace(step=k))
    imu.sample(0.0, True)
    imu.reset()


def warm_step_sensors(vehicle):
    """Three steps of each sensor of ``vehicle`` sampled from the state
    (barometer, magnetometer, ...), each reset after."""
    from acres_sim.core.truth import T_Q, TRUTH_SIZE

    states = np.zeros((3, TRUTH_SIZE))
    states[:, T_Q + 3] = 1.0
    for model in vehicle.step_sensors.values():
        model.run_block(0, states)
        model.reset()


def warm_truth():
    """The truth rebuilt from a state (what the sensor nodes do per message)."""
    from acres_sim.core.physics import S_QX, STATE_SIZE, truth_from_state

    state = np.zeros(STATE_SIZE)
    state[S_QX + 3] = 1.0
    truth_from_state(state, np.zeros(3))


def warm_rig(rig):
    """Every kernel the recorder and the nodes run for packaged vehicle ``rig``,
    each on throwaway vehicles built as they build theirs."""
    from acres_sim.config import load_config
    from acres_sim.core.terrain import flat_field
    from acres_sim.pipeline.vehicle import (SIM_SENSORS, build_vehicle, rig_simulation,
                                            static_tf, vehicle_route)

    config, route = load_config(rig=rig), vehicle_route(rig)
    for sensors in (('gnss', 'imu', 'ins'), ('ins',)):     # the recorder's, the sim node's
        warm_block(rig_simulation([build_vehicle(config, rig, route=route, sensors=sensors)], 3))
    # on a terrain: the placement on the springs at the spawn (the block kernel is the same)
    rig_simulation([build_vehicle(config, rig, route=route, sensors=())], 3, ground=flat_field())
    gnss = build_vehicle(config, rig, sensors=('gnss',))               # the sensor nodes'
    warm_gnss(gnss.gnss, np.ascontiguousarray(gnss.arms['gnss']))
    if gnss.gnss_heading is not None:
        warm_heading(gnss.gnss_heading)
    warm_imu(build_vehicle(config, rig, sensors=('imu',)).imu)
    warm_step_sensors(build_vehicle(config, rig, sensors=SIM_SENSORS))
    warm_truth()
    static_tf([build_vehicle(config, rig, sensors=())])   # the static TF (the site's conversions)


def compile_package(folder=None) -> bool:
    """The package's Python bytecode written into its ``__pycache__`` folders
    (also where ``PYTHONDONTWRITEBYTECODE`` is set, which keeps Python from
    writing it on import but not from reading it): each process of the rig and
    of the recorder would otherwise compile every module it imports again,
    about 0.1 s each here.  ``folder``: another copy of the package."""
    import compileall

    folder = folder or os.path.dirname(os.path.abspath(__file__))
    return bool(compileall.compile_dir(str(folder), quiet=1))


def main():
    """``python -m acres_sim.warmup``: compile (or load) every kernel once with
    numba's JIT, also where the kernels compiled ahead of time are current
    (numba's cache serves every call they do not take), and the package's
    bytecode."""
    os.environ['ACRES_SIM_KERNELS'] = 'jit'     # before core is imported (acres_sim.core.jit)
    from acres_sim.config.vehicles import vehicle_names

    start = time.monotonic()
    for rig in vehicle_names():
        warm_rig(rig)
    compile_package()
    print(f'acres_sim.warmup: numba kernels cached, bytecode written '
          f'({time.monotonic() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
