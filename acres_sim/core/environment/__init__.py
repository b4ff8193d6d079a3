"""The environment models of the AirSim paper: gravity against altitude
(:mod:`.gravity`), the 1976 U.S. Standard Atmosphere and the barometric
altitude formula (:mod:`.atmosphere`), and the tilted-dipole geomagnetic field
(:mod:`.geomagnetic`).  Maths only, as all of :mod:`acres_sim.core`; a main-field
model that reads a coefficient file (the WMM) is evaluated outside core, by
:mod:`acres_sim.pipeline.magnetic_field`."""
