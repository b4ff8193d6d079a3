"""The packaged Fast DDS profile of the rig at rtf 0, in the form the
installed Fast DDS reads.

At rtf 0 a reader short of CPU can miss a sample, and Fast DDS asks for it
again only when the writer announces its state (every 3 s by default), by
which time the writer's history has moved past it.  The packaged profile
makes writers announce every 10 ms.  Fast DDS 2 (ROS 2 Jazzy) and Fast DDS 3
(Kilted and later) disagree on both the file and the variable that names
it, and neither reads the other's (a file of the wrong version is refused
with an XML parser error; the profile then silently does not apply):

=========  ==================================  ==============================
Fast DDS   variable                            file
=========  ==================================  ==============================
2.x        ``FASTRTPS_DEFAULT_PROFILES_FILE``  ``config/fastdds/fast_repair.xml``
3.x        ``FASTDDS_DEFAULT_PROFILES_FILE``   ``config/fastdds/fast_repair_v3.xml``
=========  ==================================  ==============================

The version is that of the installed ``ros-fastdds`` (3.x) or
``ros-fastrtps`` (2.x) distribution (the wheels), else the one ``ROS_DISTRO``
ships (a distro from apt).
"""

from importlib import metadata
import os

from acres_sim.config.loader import config_dir

__all__ = ['PROFILES', 'fast_repair_environment', 'fastdds_major']

#: Fast DDS major version -> (the variable it reads, the packaged file for it).
PROFILES = {2: ('FASTRTPS_DEFAULT_PROFILES_FILE', 'fast_repair.xml'),
            3: ('FASTDDS_DEFAULT_PROFILES_FILE', 'fast_repair_v3.xml')}
#: ROS 2 distros whose Fast DDS is 2.x (the later ones ship 3.x).
FASTDDS2_DISTROS = ('foxy', 'galactic', 'humble', 'iron', 'jazzy')


def fastdds_major(environ=None) -> int:
    """The major version of the Fast DDS the nodes will load: 2 or 3."""
    for distribution in ('ros-fastdds', 'ros-fastrtps'):
        try:
            return 3 if int(metadata.version(distribution).split('.')[0]) >= 3 else 2
        except (metadata.PackageNotFoundError, ValueError):
            continue
    environ = os.environ if environ is None else environ
    distro = environ.get('ROS_DISTRO', 'jazzy')
    return 2 if distro in FASTDDS2_DISTROS else 3


def fast_repair_environment(environ=None, major=None):
    """The variable naming the packaged profile for Fast DDS ``major`` (default:
    the installed one); nothing when the user has a profile of their own (in
    either variable) or another middleware."""
    environ = os.environ if environ is None else environ
    if any(name in environ for name, _file in PROFILES.values()):
        return {}
    if environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp') != 'rmw_fastrtps_cpp':
        return {}
    name, file = PROFILES[major or fastdds_major(environ)]
    return {name: str(config_dir() / 'fastdds' / file)}
