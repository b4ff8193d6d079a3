"""The middle shared by the headless recorder (:mod:`acres_sim.record`) and the
live nodes (:mod:`acres_sim.ros`): what turns a resolved configuration into
running models and their outputs, written once so that both drivers get the
same numbers.  It may use :mod:`acres_sim.config` and :mod:`acres_sim.core`;
``record`` and ``ros`` build on it and never import each other.
"""
