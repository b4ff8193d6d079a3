"""package.xml is a valid format-3 manifest with the real dependencies, and the
packaged parameter files are read by rcl (the parser the nodes use) as we read them."""

from pathlib import Path

import pytest

from acres_sim.config import config_dir, load_config, read_layer

ROOT = Path(__file__).resolve().parents[1]

EXEC_DEPENDS = {
    'rclpy', 'std_msgs', 'sensor_msgs', 'nav_msgs', 'geometry_msgs', 'rosgraph_msgs',
    'diagnostic_msgs', 'tf2_ros', 'tf2_msgs', 'launch', 'launch_ros',
    'python3-numpy', 'python3-yaml', 'python3-pyproj', 'python3-matplotlib', 'python3-numba',
    'python3-rosbags-pip', 'mcap-ros2-support', 'python3-scipy', 'python3-pandas'}
TEST_DEPENDS = {'launch_pytest', 'python3-pytest'}


def test_manifest_is_valid_format_3_with_the_dependencies():
    catkin_pkg = pytest.importorskip('catkin_pkg.package', reason='catkin_pkg parses package.xml')
    package = catkin_pkg.parse_package(str(ROOT / 'package.xml'))
    package.validate()
    assert package.package_format == 3 and package.name == 'acres_sim'
    assert {d.name for d in package.exec_depends} == EXEC_DEPENDS
    assert {d.name for d in package.test_depends} == TEST_DEPENDS
    assert package.get_build_type() == 'ament_python'
    assert (ROOT / 'resource' / 'acres_sim').is_file()


def rcl_parameters(params_file, domain_id):
    """The parameters rcl hands a node started with --params-file ``params_file``."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(args=['--ros-args', '--params-file', str(params_file)], context=context,
               domain_id=domain_id)
    try:
        node = rclpy.create_node('params_check', context=context,
                                 automatically_declare_parameters_from_overrides=True)
        values = {name: parameter.value
                  for name, parameter in node.get_parameters_by_prefix('').items()
                  if name not in ('use_sim_time', 'start_type_description_service')}
        node.destroy_node()
        return values
    finally:
        rclpy.try_shutdown(context=context)


def as_python(value):
    """rclpy returns numeric arrays as array.array; compare as lists."""
    return list(value) if hasattr(value, 'tolist') or type(value).__name__ == 'array' else value


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('name', ['site.yaml', 'sensors.yaml', 'sensors_polaris.yaml',
                                  'sensors_maxxum.yaml', 'sensors_maxxum_cab.yaml', 'resolved',
                                  'handwritten'])
def test_rcl_reads_the_parameter_files_as_acres_sim_does(name, tmp_path, ros_domain_id):
    path = tmp_path / f'{name}.yaml'
    if name == 'resolved':
        path.write_text(load_config(rig='polaris', add_outages=['5:7.5']).to_params_yaml('units'))
    elif name == 'handwritten':  # what a user may type: exponents, an unquoted time, no quotes
        path.write_text('/**:\n  ros__parameters:\n    seed: 7\n    mount_frame: chassis\n'
                        '    gnss:\n      hz: 5.0\n      corrections:\n'
                        '        outages_s: ["30:45", "100.5:120"]\n'
                        '      datum:\n        start_utc: 2027-01-01T12:00:00Z\n'
                        '        geoid:\n          dn_de: 1e-05\n          dn_dn: -2.5E-6\n')
    else:
        path = config_dir() / name
    ours = read_layer(path)
    theirs = {n: as_python(v) for n, v in rcl_parameters(path, ros_domain_id).items()}
    outages = 'gnss.corrections.outages_s'
    if outages in theirs:
        theirs[outages] = [[float(x) for x in item.split(':')] for item in theirs[outages]]
    assert theirs == ours
    for key, value in ours.items():  # a float key must not arrive as an integer parameter
        assert type(theirs[key]) is type(value), key


def test_the_warm_up_writes_the_bytecode_that_python_reads(tmp_path, monkeypatch):
    """Even with PYTHONDONTWRITEBYTECODE: every module of the package gets the
    .pyc an import checks (PEP 552: the magic number, flags 0, the source's
    mtime and size), where Python itself would find it."""
    import importlib.util
    import shutil
    import struct
    import sys

    from acres_sim.warmup import compile_package

    copy = tmp_path / 'acres_sim'
    shutil.copytree(ROOT / 'acres_sim', copy, ignore=shutil.ignore_patterns('__pycache__'))
    monkeypatch.setenv('PYTHONDONTWRITEBYTECODE', '1')
    monkeypatch.setattr(sys, 'dont_write_bytecode', True)
    assert compile_package(copy)
    sources = sorted(copy.rglob('*.py'))
    assert len(sources) > 100
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        magic, flags, mtime, size = struct.unpack('<4sIII', cached.read_bytes()[:16])
        stat = source.stat()
        assert (magic, flags) == (importlib.util.MAGIC_NUMBER, 0), source
        assert (mtime, size) == (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
