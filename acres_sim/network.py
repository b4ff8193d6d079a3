"""Where the nodes of a rig talk DDS: this machine only, unless asked.

The rig's nodes use the real vehicles' topic names (``/clock``,
``/vehicle/odom``, ``/cmd_vel``), so a rig that joined the LAN on domain 0
would mix with the vehicles there.  With ``network='loopback'`` (the default of
``acres-sim up`` and of the launch files) and none of the ROS discovery
variables set by the user, every node gets ``ROS_AUTOMATIC_DISCOVERY_RANGE=
LOCALHOST`` (Iron and later), or ``ROS_LOCALHOST_ONLY=1`` where ``ROS_DISTRO``
names a distro without the range (Humble and older).  A user who set one of
them keeps their choice; ``network='lan'`` leaves the ROS defaults (discovery
on the local subnet).

A ``ROS_LOCALHOST_ONLY`` of the user's is passed on in the newer variables
where the distro has them: Jazzy still honours it but has every node log two
deprecation warnings, and Kilted ignores it (its nodes would discover the
whole subnet).  ``ROS_LOCALHOST_ONLY=1`` becomes ``ROS_AUTOMATIC_DISCOVERY_RANGE=
LOCALHOST`` without static peers (what it meant on Jazzy, where it overrode
both), any other value the ROS default; either way the nodes get the old
variable empty, which rcl reads as unset.
"""

import os

from acres_sim.config.validate import ConfigError

__all__ = ['DISCOVERY_VARIABLES', 'NETWORKS', 'network_environment']

NETWORKS = ('loopback', 'lan')
DISCOVERY_VARIABLES = ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS')
OLD_DISTROS = ('foxy', 'galactic', 'humble')     # no ROS_AUTOMATIC_DISCOVERY_RANGE yet


def network_environment(network='loopback', environ=None):
    """(variables to add to every node's environment, one line that says where
    the rig's DDS traffic goes) for ``network`` 'loopback' or 'lan' and the
    user's environment ``environ`` (default os.environ)."""
    if network not in NETWORKS:
        raise ConfigError(f'network = {network!r}; allowed: {" or ".join(NETWORKS)}')
    environ = os.environ if environ is None else environ
    own = [f'{name}={environ[name]}' for name in DISCOVERY_VARIABLES if environ.get(name)]
    localhost_only = environ.get('ROS_LOCALHOST_ONLY')
    if localhost_only and environ.get('ROS_DISTRO') not in OLD_DISTROS:
        if localhost_only == '1':
            return ({'ROS_LOCALHOST_ONLY': '', 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                     'ROS_STATIC_PEERS': ''},
                    'DDS stays on this machine (your ROS_LOCALHOST_ONLY=1, passed on as '
                    'ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: Kilted ignores the old variable)')
        return ({'ROS_LOCALHOST_ONLY': ''},
                f'DDS discovery as you set it: {", ".join(own)} (ROS_LOCALHOST_ONLY is '
                'not 1: the ROS default, passed on without the old variable)')
    if own:
        return {}, f'DDS discovery as you set it: {", ".join(own)}'
    if network == 'lan':
        return {}, ('DDS discovery on the local network (network lan): other machines on '
                    'this ROS_DOMAIN_ID see the rig and its topics')
    name, value = (('ROS_LOCALHOST_ONLY', '1') if environ.get('ROS_DISTRO') in OLD_DISTROS
                   else ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST'))
    return {name: value}, (f'DDS stays on this machine ({name}={value}); --network lan '
                           '(launch argument network:=lan) to reach other machines')
