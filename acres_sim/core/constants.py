"""Physical constants that more than one model uses, defined once."""

__all__ = ['STANDARD_GRAVITY_MPS2']

# Standard gravity g [m/s^2]: the spec's g of the IMU and the INS (the world
# gravity vector is (0, 0, -g)), the default gravity of the terrain, and g0 of
# the 1976 standard atmosphere.
STANDARD_GRAVITY_MPS2 = 9.80665
