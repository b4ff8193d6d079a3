"""acres_sim: the ACRE farm vehicles' sensor rig, simulated for ROS 2.

Layers (the README's "Layout"; import-linter contracts in pyproject.toml
keep them): ``core`` (numpy/numba maths: no configuration, files or ROS),
``config`` (the one schema and checker; the only place that knows key names
and file formats), ``pipeline`` (what both drivers share: vehicles built from
a configuration, the sensor channels, the message encoders), the two drivers
``record`` (headless) and ``ros`` (rclpy nodes), which never import each
other, ``analysis`` (evaluate and sweep: runs scored against their truth),
and on top ``rig``, ``up`` and ``cli``.

``acres_sim.evaluate(...)`` and ``acres_sim.sweep(...)`` are the functions of
``acres-sim evaluate`` and ``acres-sim sweep``, loaded when first used (evo
and Dask are not imported by ``import acres_sim``).
"""

__version__ = '0.1.0'

__all__ = ['__version__', 'evaluate', 'sweep']

# name -> the module that defines it, imported on first use (by name, so that
# a module importing ``acres_sim`` for its version does not import the analysis)
_LAZY = {'evaluate': 'acres_sim.analysis.evaluate', 'sweep': 'acres_sim.analysis.sweep'}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
