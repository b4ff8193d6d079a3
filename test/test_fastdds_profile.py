"""The packaged Fast DDS profile of rtf 0 loads on the installed Fast DDS.

Reference: the installed Fast DDS itself.  A real rclpy node (in a process of
its own, on this test's domain) is started with the variable and file that
:func:`fast_repair_environment` chooses, and must log no XML parser error
(Fast DDS logs them on stdout);
the other version's file under the same variable must log one, which shows
that this Fast DDS reads that variable (a variable it ignores would pass any
file) and that the check can fail.
"""

import os
import subprocess
import sys

import pytest

from acres_sim.config.loader import config_dir
from acres_sim.fastdds_profile import PROFILES, fast_repair_environment, fastdds_major

NODE = '''
import rclpy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('profile_probe')
node.create_publisher(String, 'profile_probe', 10)
node.destroy_node()
rclpy.shutdown()
print('started')
'''


def _start_a_node(ros_domain_id, profile_env):
    env = {k: v for k, v in os.environ.items() if k not in
           ('FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_DEFAULT_PROFILES_FILE')}
    env.update(profile_env, RMW_IMPLEMENTATION='rmw_fastrtps_cpp')
    done = subprocess.run([sys.executable, '-c', NODE], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)
    assert done.returncode == 0 and 'started' in done.stdout, done.stdout
    return done.stdout                 # Fast DDS logs its errors on stdout


@pytest.mark.requires_rclpy
def test_the_chosen_profile_loads_and_the_other_version_s_is_refused(ros_domain_id):
    major = fastdds_major()
    chosen = fast_repair_environment({})
    ((variable, path),) = chosen.items()
    assert (variable, os.path.basename(path)) == PROFILES[major]
    assert 'XMLPARSER' not in _start_a_node(ros_domain_id, chosen)
    other = config_dir() / 'fastdds' / PROFILES[5 - major][1]      # 2 <-> 3
    assert 'XMLPARSER' in _start_a_node(ros_domain_id, {variable: str(other)})


@pytest.mark.parametrize('major, variable, tag', [
    (2, 'FASTRTPS_DEFAULT_PROFILES_FILE', '<heartbeatPeriod>'),
    (3, 'FASTDDS_DEFAULT_PROFILES_FILE', '<heartbeat_period>'),
])
def test_each_version_gets_its_variable_and_tag_names(major, variable, tag):
    ((name, path),) = fast_repair_environment({}, major=major).items()
    assert name == variable
    with open(path, encoding='utf-8') as file:
        assert tag in file.read()


def test_the_version_of_an_apt_install_comes_from_its_distro(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, 'version', missing)
    assert fastdds_major({'ROS_DISTRO': 'jazzy'}) == 2
    assert fastdds_major({'ROS_DISTRO': 'humble'}) == 2
    assert fastdds_major({'ROS_DISTRO': 'kilted'}) == 3
    assert fastdds_major({'ROS_DISTRO': 'rolling'}) == 3
