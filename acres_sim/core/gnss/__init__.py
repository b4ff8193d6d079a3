"""The GNSS receiver model in the position domain (spec: GNSS Receiver).

Modules, in the order an epoch uses them: ``constellation`` (synthetic orbits,
lines of sight), ``sky`` (obstacle ray tests, satellite classes, DOP,
multipath), ``corrections`` (correction age), ``fix_state`` (the RTK state
machine), ``errors`` (the correlated error and the epoch's 11 random values),
``nmea`` (the GGA sentence) and ``receiver`` (the epoch and its row).  numpy
and numba only; nothing here imports ROS.  See docs/gnss_receiver.md.
"""

from acres_sim.core.gnss.receiver import GnssReceiver, GnssSettings

__all__ = ['GnssReceiver', 'GnssSettings']
