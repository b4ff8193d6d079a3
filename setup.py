"""ament_python package acres_sim (also installable with pip on a plain Python machine)."""
from glob import glob
import os

from setuptools import find_packages, setup

PACKAGE = 'acres_sim'


def tree(directory):
    """(install dir, files) pairs for every file under `directory`, keeping sub-folders."""
    pairs = []
    for root, _dirs, files in os.walk(directory):
        if files:
            pairs.append((os.path.join('share', PACKAGE, root),
                          [os.path.join(root, f) for f in sorted(files)]))
    return sorted(pairs)


setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(include=[PACKAGE, PACKAGE + '.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', sorted(glob('launch/*.launch.py'))),
    ] + tree('config'),
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='acres_sim developers',
    maintainer_email='acres-sim@example.org',
    description='Simulated sensor rig of the ACRE farm vehicles for ROS 2',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'acres-sim = acres_sim.cli:run',
            'sim_node = acres_sim.ros.sim_node:main',
            'gnss_node = acres_sim.ros.gnss_node:main',
            'imu_node = acres_sim.ros.imu_node:main',
            'sensor_nodes = acres_sim.ros.sensor_nodes:main',
        ],
    },
)
