#!/usr/bin/env python3
"""Build ROS 2 interface packages into a pip-installed ROS 2 prefix: tf2_msgs
(the default) and gps_msgs (``--package gps_msgs``).

The ros-jazzy-* wheels ship neither.  This script does by hand what
``rosidl_generate_interfaces()`` does in an ament build, for the messages
acres_sim needs (:data:`PACKAGES`): tf2_msgs/msg/TFMessage, and
gps_msgs/msg/GPSStatus and GPSFix (their definitions are acres_sim's
``acres_sim/pipeline/interfaces.py``, from which rosbags learns them too):

1. generate the C code, the C typesupports (dispatch, Fast DDS, introspection)
   and the Python code with the rosidl generators installed in the prefix;
2. compile them with gcc/g++ into the libraries and Python extension modules
   an ament build would install;
3. check the result in a child process (import, serialize, publish);
4. copy libraries, Python package, headers, interface files and ament index
   markers into the prefix.

Everything is built and checked in a temporary directory first, so a failure
leaves the prefix as it was.  Usage (run it with the prefix's own Python):

    .venv/bin/python tools/build_interfaces.py --prefix .venv [--package NAME] [--force]

This is a developer tool, not part of the acres_sim package.
"""

import argparse
import concurrent.futures
import contextlib
import os
from pathlib import Path
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import traceback

ROOT = Path(__file__).resolve().parents[1]


class Interface:
    """One interface package: its name and version, its messages ((type name,
    .msg text), a type after those it uses), the interface packages its types
    contain (directly or nested; ``run_dependencies``: those its package.xml
    names) and the check's statements, which import the package and make
    ``Message`` (a message class) and ``message`` (one of them)."""

    def __init__(self, name, version, description, messages, dependencies, run_dependencies,
                 check):
        self.name, self.version, self.description = name, version, description
        self.messages = list(messages)
        self.dependencies = list(dependencies)
        self.run_dependencies = list(run_dependencies)
        self.check = check

    @property
    def message_files(self):
        """The .msg files relative to the package: msg/<Type>.msg."""
        return [f'msg/{name}.msg' for name, _text in self.messages]

    def package_xml(self):
        depends = ''.join(f'  <depend>{package}</depend>\n'
                          for package in self.run_dependencies)
        return PACKAGE_XML.format(name=self.name, version=self.version,
                                  description=self.description, depends=depends)


def tf2_msgs():
    return Interface(
        'tf2_msgs', '0.36.0', 'Subset of the ROS 2 Jazzy tf2_msgs package (msg/TFMessage only)',
        [('TFMessage', 'geometry_msgs/TransformStamped[] transforms\n')],
        ['geometry_msgs', 'std_msgs', 'builtin_interfaces'],
        ['builtin_interfaces', 'geometry_msgs'],
        'from geometry_msgs.msg import TransformStamped\n'
        'from tf2_msgs.msg import TFMessage as Message\n'
        "message = Message(transforms=[TransformStamped(child_frame_id='check')])\n")


def gps_msgs():
    """gps_msgs from acres_sim's definitions (the source tree's, found from here)."""
    sys.path.insert(0, str(ROOT))
    from acres_sim.pipeline.interfaces import GPS_MSGS, GPS_MSGS_VERSION

    return Interface(
        'gps_msgs', GPS_MSGS_VERSION,
        'The gps_msgs messages (GPSStatus, GPSFix) of gps_umd',
        GPS_MSGS, ['std_msgs', 'builtin_interfaces'], ['std_msgs'],
        'from gps_msgs.msg import GPSStatus\n'
        'from gps_msgs.msg import GPSFix as Message\n'
        'message = Message(status=GPSStatus(status=GPSStatus.STATUS_RTK_FIX, '
        'satellite_used_prn=[3, 5]), hdop=0.8)\n')


#: The packages this tool builds: name -> its Interface.
PACKAGES = {'tf2_msgs': tf2_msgs, 'gps_msgs': gps_msgs}

# Typesupports that rosidl_typesupport_c dispatches to at run time.
TYPESUPPORTS = ['rosidl_typesupport_fastrtps_c', 'rosidl_typesupport_introspection_c']

# One Python extension module is built per C typesupport, as in an ament build.
PYTHON_TYPESUPPORTS = ['rosidl_typesupport_c'] + TYPESUPPORTS

# Packages under <prefix>/include/<name> whose headers the generated code includes
# (besides the package's own interface dependencies).
HEADER_PACKAGES = [
    'rcutils', 'rcpputils', 'rmw', 'rosidl_runtime_c', 'rosidl_typesupport_interface',
    'rosidl_dynamic_typesupport', 'rosidl_typesupport_c', 'rosidl_typesupport_fastrtps_c',
    'rosidl_typesupport_fastrtps_cpp', 'rosidl_typesupport_introspection_c',
]

PACKAGE_XML = """\
<?xml version="1.0"?>
<?xml-model href="http://download.ros.org/schema/package_format3.xsd" schematypens="http://www.w3.org/2001/XMLSchema"?>
<package format="3">
  <name>{name}</name>
  <version>{version}</version>
  <description>
    {description}, generated and compiled into a pip-installed ROS 2 prefix by
    acres_sim's tools/build_interfaces.py.
  </description>
  <maintainer email="acres-sim@example.org">acres_sim developers</maintainer>
  <license>BSD-3-Clause</license>

  <buildtool_depend>ament_cmake</buildtool_depend>
  <buildtool_depend>rosidl_default_generators</buildtool_depend>

{depends}
  <exec_depend>rosidl_default_runtime</exec_depend>

  <member_of_group>rosidl_interface_packages</member_of_group>

  <export>
    <build_type>ament_cmake</build_type>
  </export>
</package>
"""

# Run in a child Python: the built package must import, serialize and publish.
# argv[1] is the directory the Python package is expected to come from; the
# package's own check statements (Interface.check) and name are filled in.
CHECK_SCRIPT = """
import importlib
import sys

import rclpy
from rclpy.serialization import deserialize_message, serialize_message
import {name}
{check}
assert {name}.__file__.startswith(sys.argv[1]), '{name} found elsewhere: ' + {name}.__file__
for typesupport in {typesupports!r}:
    importlib.import_module('{name}.{name}_s__' + typesupport)
assert deserialize_message(serialize_message(message), Message) == message
rclpy.init()
try:
    node = rclpy.create_node('build_{name}_check')
    node.create_publisher(Message, '/build_{name}_check', 10).publish(message)
finally:
    rclpy.try_shutdown()
"""


class BuildError(Exception):
    """A build step failed; `step` names it, `detail` says why."""

    def __init__(self, step, detail):
        super().__init__(f'{step}: {detail}')
        self.step = step
        self.detail = detail


class Layout:
    """The paths of one build: the target prefix and the temporary build tree.

    The staging directory mirrors the prefix (lib/, include/, share/ and the
    site-packages directory), so installing is copying it over the prefix.
    """

    def __init__(self, prefix, build_dir, package):
        self.package = package
        self.prefix = prefix
        self.lib = prefix / 'lib'
        self.site_packages = site_packages_of(prefix)
        self.source = build_dir / 'src'
        self.generated = build_dir / 'generated'
        self.objects = build_dir / 'obj'
        self.stage = build_dir / 'stage'
        self.stage_lib = self.stage / 'lib'
        self.stage_site_packages = self.stage / self.site_packages.relative_to(prefix)
        self.stage_python_package = self.stage_site_packages / package.name

    def generator_dir(self, generator):
        """Output directory of one generator (each gets its own: some file names clash)."""
        return self.generated / generator / self.package.name


class Library:
    """One shared object to build: its sources, the libraries it links and its file.

    `uses_python` marks code that calls the Python C API: its symbols come from
    the interpreter at load time, not from a library linked here.
    """

    def __init__(self, output, sources, links, rpath, uses_python=False):
        self.output = output
        self.sources = sources
        self.links = list(dict.fromkeys(links))
        self.rpath = rpath
        self.uses_python = uses_python

    def is_cpp(self):
        """Whether a source is C++, so that g++ must link (it adds libstdc++)."""
        return any(source.suffix == '.cpp' for source in self.sources)


class Command:
    """A compiler invocation and the build step it belongs to."""

    def __init__(self, step, argv):
        self.step = step
        self.argv = argv


def main(argv=None):
    """Parse the arguments, build each package unless already done, and print one
    summary line per package; the exit status is 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--prefix', required=True, type=Path,
                        help='the ROS prefix to install into (the venv root)')
    parser.add_argument('--package', action='append', choices=sorted(PACKAGES),
                        help='a package to build (repeat for more; default: tf2_msgs)')
    parser.add_argument('--force', action='store_true',
                        help='rebuild even if a working package is installed')
    parser.add_argument('--jobs', type=int, default=len(os.sched_getaffinity(0)),
                        help='parallel compiler processes (default: usable cores)')
    args = parser.parse_args(argv)
    prefix = args.prefix.resolve()
    failed = 0
    for name in args.package or ['tf2_msgs']:
        failed += build_package(prefix, PACKAGES[name](), args.force, args.jobs)
    return 1 if failed else 0


def build_package(prefix, package, force, jobs):
    """Build and install one Interface; 0 on success (or already working), else 1."""
    start = time.monotonic()
    name = package.name
    if not force and check_package(prefix, site_packages_of(prefix), package) is None:
        print(f'build_interfaces: {name} already works in {prefix}; '
              'nothing to do (--force rebuilds)')
        return 0
    try:
        with tempfile.TemporaryDirectory(prefix=f'build_{name}-') as build_dir:
            build(Layout(prefix, Path(build_dir), package), jobs)
    except BuildError as error:
        print(f'build_interfaces: {name}: FAILED at step "{error.step}": {error.detail}',
              file=sys.stderr)
        return 1
    elapsed = time.monotonic() - start
    types = ', '.join(type_name for type_name, _text in package.messages)
    print(f'build_interfaces: built and installed {name} ({types}) into {prefix} '
          f'in {elapsed:.1f} s')
    return 0


def build(layout, jobs):
    """Run the steps in order; only the last one writes into the prefix."""
    with step('check prerequisites'):
        check_prerequisites(layout)
    with step('generate code'):
        write_message_file(layout)
        generated = generate_code(layout)
    with step('compile'):
        libraries = plan_libraries(layout)
        compile_objects(layout, libraries, jobs)
    with step('link'):
        layout.stage_lib.mkdir(parents=True)
        layout.stage_python_package.mkdir(parents=True)
        for group in link_order(libraries):
            run_parallel([link_command(layout, library) for library in group], jobs)
    with step('stage files'):
        stage_data_files(layout, generated)
    with step('check built package'):
        problem = check_package(layout.prefix, layout.stage_site_packages, layout.package,
                                layout.stage_lib)
        if problem is not None:
            raise BuildError('check built package', problem)
    with step('install'):
        install(layout.stage, layout.prefix)


@contextlib.contextmanager
def step(name):
    """Report an unexpected error inside the block as a failure of step `name`.

    BuildErrors raised inside keep their own, more precise step name.
    """
    try:
        yield
    except BuildError:
        raise
    except Exception as error:  # noqa: BLE001 - reported as one line, see main()
        raise BuildError(name, f'{type(error).__name__}: {error}') from error


def check_prerequisites(layout):
    """Fail early if the prefix, the interpreter or the compilers are not usable."""
    if Path(sys.prefix).resolve() != layout.prefix:
        raise BuildError('check prefix', f'run this script with {layout.prefix}/bin/python '
                         f'(the extension modules must match its Python), not {sys.executable}')
    for package in layout.package.dependencies + ['rosidl_generator_c', 'rosidl_generator_py']:
        if not (layout.prefix / 'share' / package).is_dir():
            raise BuildError('check prefix', f'{layout.prefix}/share/{package} is missing')
    for compiler in ('gcc', 'g++'):
        if shutil.which(compiler) is None:
            raise BuildError('check compilers', f'{compiler} is not on PATH')


def write_message_file(layout):
    """Write the message definitions where the generators expect them: <dir>/msg/<Type>.msg."""
    for relative, (_name, text) in zip(layout.package.message_files, layout.package.messages):
        path = layout.source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def generate_code(layout):
    """Run the rosidl generators, keeping their chatter in a log unless they fail.

    Returns the generated interface files to install into share/<package>/msg:
    the .idl and the type description .json.
    """
    # The generators find their templates and the typesupports with ament_index.
    os.environ['AMENT_PREFIX_PATH'] = str(layout.prefix)
    log = layout.generated / 'generators.log'
    log.parent.mkdir(parents=True)
    try:
        with output_redirected_to(log):
            return run_generators(layout)
    except (Exception, SystemExit):  # noqa: BLE001 - every generator error is reported alike
        raise BuildError('generate code',
                         tail(log.read_text() + traceback.format_exc())) from None


@contextlib.contextmanager
def output_redirected_to(path):
    """Send whatever is written to stdout and stderr to the file `path`.

    This redirects the file descriptors instead of replacing sys.stdout:
    empy, which renders the generators' templates, installs its own proxy as
    sys.stdout and fails on later use if that proxy has been swapped out.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    log = open(path, 'w')
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        log.close()


def run_generators(layout):
    """Translate .msg to .idl, hash it, then run the C, typesupport and Python generators."""
    from rosidl_cli.command.hash.api import generate_type_hashes
    from rosidl_cli.command.translate.api import translate
    from rosidl_generator_py.cli import GeneratePython
    from rosidl_typesupport_c.cli import GenerateCTypesupport
    from rosidl_typesupport_fastrtps_c.cli import GenerateFastRTPSCTypesupport
    from rosidl_typesupport_introspection_c.cli import GenerateIntrospectionCTypesupport

    package = layout.package.name
    include_paths = [str(layout.prefix / 'share'), str(layout.source.parent)]
    idl_files = translate(
        package_name=package,
        interface_files=[f'{layout.source}:{relative}'
                         for relative in layout.package.message_files],
        include_paths=include_paths, output_format='idl', output_path=layout.generated / 'idl')
    description_files = generate_type_hashes(
        package_name=package, interface_files=idl_files, include_paths=include_paths,
        output_path=layout.generated / 'type_description')
    generate_c(layout, idl_files, include_paths, description_files)
    GenerateCTypesupport('c_typesupport', typesupport_implementations=TYPESUPPORTS).generate(
        package, idl_files, include_paths, layout.generator_dir('rosidl_typesupport_c'))
    GenerateFastRTPSCTypesupport('fastrtps_c').generate(
        package, idl_files, include_paths, layout.generator_dir('rosidl_typesupport_fastrtps_c'))
    GenerateIntrospectionCTypesupport('introspection_c').generate(
        package, idl_files, include_paths,
        layout.generator_dir('rosidl_typesupport_introspection_c'))
    GeneratePython('py', typesupport_implementations=PYTHON_TYPESUPPORTS).generate(
        package, idl_files, include_paths, layout.generator_dir('rosidl_generator_py'))
    idl_paths = [Path(base) / relative for base, _, relative in
                 (idl.rpartition(':') for idl in idl_files)]
    return idl_paths + [Path(path) for path in description_files]


def generate_c(layout, idl_files, include_paths, description_files):
    """Run rosidl_generator_c as ament does, with the .msg as the type's source text.

    rosidl_generator_c.cli.GenerateC would embed the .idl instead; an ament build
    embeds the original .msg, which is what `get_type_description_sources` returns.
    """
    from rosidl_cli.command.helpers import (
        build_type_description_tuples, generate_visibility_control_file,
        generator_arguments_file, legacy_generator_arguments)
    from rosidl_generator_c import generate_c as generate
    from ament_index_python import get_package_share_directory

    package = layout.package.name
    templates = Path(get_package_share_directory('rosidl_generator_c')) / 'resource'
    output = layout.generator_dir('rosidl_generator_c')
    generate_visibility_control_file(
        package_name=package,
        template_path=templates / 'rosidl_generator_c__visibility_control.h.in',
        output_path=output / 'msg' / 'rosidl_generator_c__visibility_control.h')
    arguments = legacy_generator_arguments(
        package_name=package, interface_files=idl_files, include_paths=include_paths,
        templates_path=templates, output_path=output)
    with generator_arguments_file(
            **arguments,
            type_description_tuples=build_type_description_tuples(idl_files, description_files),
            ros_interface_files=[str(layout.source / relative)
                                 for relative in layout.package.message_files]) as arguments_file:
        generate(arguments_file)


def plan_libraries(layout):
    """The shared objects an ament build of the package produces, with what each links."""
    package = layout.package.name

    def generated(generator, pattern):
        return sorted(layout.generator_dir(generator).rglob(pattern))

    def of_dependencies(suffix):
        return [f'{package}__{suffix}' for package in layout.package.dependencies]

    def library(name, sources, links, uses_python=False):
        return Library(layout.stage_lib / f'lib{name}.so', sources, links, '$ORIGIN', uses_python)

    runtime = ['rosidl_runtime_c', 'rcutils']
    own = f'{package}__rosidl_generator_c'
    libraries = [
        library(own, generated('rosidl_generator_c', '*.c'),
                of_dependencies('rosidl_generator_c') + runtime),
        library(f'{package}__rosidl_typesupport_c', generated('rosidl_typesupport_c', '*.cpp'),
                [own] + of_dependencies('rosidl_typesupport_c')
                + of_dependencies('rosidl_generator_c') + ['rosidl_typesupport_c'] + runtime),
        library(f'{package}__rosidl_typesupport_fastrtps_c',
                generated('rosidl_typesupport_fastrtps_c', '*.cpp'),
                [own] + of_dependencies('rosidl_typesupport_fastrtps_c')
                + of_dependencies('rosidl_generator_c')
                + ['rosidl_typesupport_fastrtps_c', 'rosidl_typesupport_fastrtps_cpp', 'rmw',
                   'rosidl_dynamic_typesupport', 'fastcdr'] + runtime),
        library(f'{package}__rosidl_typesupport_introspection_c',
                generated('rosidl_typesupport_introspection_c', '*.c'),
                [own] + of_dependencies('rosidl_typesupport_introspection_c')
                + of_dependencies('rosidl_generator_c')
                + ['rosidl_typesupport_introspection_c'] + runtime),
        library(f'{package}__rosidl_generator_py', generated('rosidl_generator_py', 'msg/*_s.c'),
                [own, f'{package}__rosidl_typesupport_c'] + of_dependencies('rosidl_generator_py')
                + of_dependencies('rosidl_generator_c') + runtime, uses_python=True),
    ]
    # The Python extension modules live in site-packages/<package> and find the
    # libraries above through a relative rpath ($ORIGIN/../../.. is <prefix>/lib).
    to_lib = os.path.relpath(layout.lib, layout.site_packages / package)
    for typesupport in PYTHON_TYPESUPPORTS:
        libraries.append(Library(
            layout.stage_python_package / f'{package}_s__{typesupport}.so',
            generated('rosidl_generator_py', f'_{package}_s.ep.{typesupport}.c'),
            [f'{package}__rosidl_generator_py', f'{package}__{typesupport}',
             f'{package}__rosidl_typesupport_c', own, 'rosidl_typesupport_c'] + runtime,
            f'$ORIGIN/{to_lib}', uses_python=True))
    return libraries


def link_order(libraries):
    """Group the libraries so that each group only links libraries of earlier groups."""
    generator_c, typesupport_c, fastrtps_c, introspection_c, generator_py, *modules = libraries
    return [[generator_c], [typesupport_c, fastrtps_c, introspection_c], [generator_py], modules]


def compile_objects(layout, libraries, jobs):
    """Compile every source file into an object file, `jobs` at a time."""
    include_flags = [f'-I{path}' for path in include_dirs(layout)]
    commands = []
    for library in libraries:
        for source in library.sources:
            target = object_file(layout, library, source)
            target.parent.mkdir(parents=True, exist_ok=True)
            compiler = ['g++', '-std=c++17'] if source.suffix == '.cpp' else ['gcc']
            commands.append(Command(
                f'compile {source.name}',
                compiler + ['-O2', '-fPIC', '-c', str(source), '-o', str(target)] + include_flags))
    run_parallel(commands, jobs)


def include_dirs(layout):
    """Header directories: the generated code, the prefix's packages, Python and numpy."""
    import numpy

    generated = [layout.generated / generator for generator in (
        'rosidl_generator_c', 'rosidl_typesupport_fastrtps_c',
        'rosidl_typesupport_introspection_c', 'rosidl_generator_py')]
    packages = [layout.prefix / 'include' / package
                for package in layout.package.dependencies + HEADER_PACKAGES]
    # fastcdr installs its headers directly under include/.
    return generated + packages + [layout.prefix / 'include',
                                   Path(sysconfig.get_paths()['include']),
                                   Path(numpy.get_include())]


def object_file(layout, library, source):
    """Where the object of `source` goes: one folder per library, as names repeat."""
    return layout.objects / library.output.stem / (source.name + '.o')


def link_command(layout, library):
    """The gcc/g++ command that links one shared object.

    Libraries must resolve every symbol (--no-undefined), which catches a
    missing library here rather than at import time; code that uses the
    Python C API cannot, as the interpreter provides those symbols.
    """
    library_dirs = [layout.stage_lib, layout.lib] + ros_wheel_library_dirs(layout.prefix)
    objects = [str(object_file(layout, library, source)) for source in library.sources]
    command = ['g++' if library.is_cpp() else 'gcc', '-shared', '-o', str(library.output)]
    command += objects
    command += [f'-L{path}' for path in library_dirs]
    command += [f'-Wl,-rpath-link,{path}' for path in library_dirs]
    command += [f'-l{name}' for name in library.links]
    command += [f'-Wl,-rpath,{library.rpath}']
    if library.output.parent == layout.stage_lib:
        command += [f'-Wl,-soname,{library.output.name}']
    if not library.uses_python:
        command += ['-Wl,--no-undefined']
    return Command(f'link {library.output.name}', command)


def site_packages_of(prefix):
    """The prefix's site-packages directory (lib/python3.X/site-packages)."""
    return Path(sysconfig.get_path('purelib', vars={'base': str(prefix), 'platbase': str(prefix)}))


def ros_wheel_library_dirs(prefix):
    """The site-packages/ros_*.libs folders where the wheels keep bundled libraries."""
    return sorted(path for path in site_packages_of(prefix).glob('ros_*.libs') if path.is_dir())


def run_parallel(commands, jobs):
    """Run the commands, at most `jobs` at once; raise for the first one that failed."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(run_command, commands))
    for command, result in zip(commands, results):
        if result.returncode != 0:
            raise BuildError(command.step, tail(result.stderr or result.stdout))


def run_command(command):
    """Run one compiler command and capture its output."""
    return subprocess.run(command.argv, capture_output=True, text=True, check=False)


def stage_data_files(layout, generated):
    """Put the Python code, headers, interface files and ament index markers in the stage."""
    package = layout.package.name
    python_out = layout.generator_dir('rosidl_generator_py')
    (layout.stage_python_package / '__init__.py').write_text('')
    (layout.stage_python_package / 'msg').mkdir()
    for path in sorted((python_out / 'msg').glob('*.py')):
        shutil.copy2(path, layout.stage_python_package / 'msg' / path.name)

    include = layout.stage / 'include' / package / package
    for generator in ('rosidl_generator_c', 'rosidl_typesupport_fastrtps_c',
                      'rosidl_typesupport_introspection_c'):
        for header in sorted(layout.generator_dir(generator).rglob('*.h*')):
            copy_into(header, include / header.relative_to(layout.generator_dir(generator)))

    share = layout.stage / 'share' / package
    for relative in layout.package.message_files:
        copy_into(layout.source / relative, share / relative)
    for path in generated:
        copy_into(path, share / 'msg' / path.name)
    (share / 'package.xml').write_text(layout.package.package_xml())

    index = layout.stage / 'share' / 'ament_index' / 'resource_index'
    interfaces = sorted(f'msg/{path.name}' for path in generated if path.suffix == '.idl')
    markers = {
        'packages': '',
        'rosidl_interfaces': '\n'.join(interfaces + layout.package.message_files),
        'package_run_dependencies': ';'.join(layout.package.run_dependencies
                                             + ['rosidl_default_runtime']),
    }
    for resource_type, content in markers.items():
        (index / resource_type).mkdir(parents=True)
        (index / resource_type / package).write_text(content)


def copy_into(source, destination):
    """Copy one file, creating the destination's directory."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, destination)


def install(stage, prefix):
    """Copy the staged tree over the prefix, each file replaced atomically.

    All files are first copied next to their destination under a temporary
    name; only when every copy succeeded are they renamed into place, so a
    failed copy (disk full, permissions) leaves the prefix unchanged.
    """
    files = sorted(path for path in stage.rglob('*') if path.is_file())
    pending = []
    try:
        for path in files:
            destination = prefix / path.relative_to(stage)
            destination.parent.mkdir(parents=True, exist_ok=True)
            temporary = destination.with_name(destination.name + '.build_interfaces-new')
            pending.append((temporary, destination))
            shutil.copy2(path, temporary)
    except OSError as error:
        for temporary, _ in pending:
            temporary.unlink(missing_ok=True)
        raise BuildError('install', str(error)) from error
    for temporary, destination in pending:
        os.replace(temporary, destination)


def check_environment(prefix, python_dir, lib_dir):
    """Environment for a child Python of the prefix, finding `python_dir` and `lib_dir` first.

    ros_wheels_bootstrapper re-executes Python to set LD_LIBRARY_PATH unless
    _ROS_WHEELS_BOOTSTRAP_COMPLETE is set, so this sets both together: the
    library path holds `lib_dir` first, then what the bootstrapper would add.
    DDS discovery stays on this machine.
    """
    env = dict(os.environ)
    library_path = [str(lib_dir)] if lib_dir else []
    library_path += [str(prefix / 'lib')] + [str(path) for path in ros_wheel_library_dirs(prefix)]
    library_path += env.get('LD_LIBRARY_PATH', '').split(os.pathsep)
    env['LD_LIBRARY_PATH'] = os.pathsep.join(dict.fromkeys(p for p in library_path if p))
    env['_ROS_WHEELS_BOOTSTRAP_COMPLETE'] = '1'
    python_path = [str(python_dir)] + env.get('PYTHONPATH', '').split(os.pathsep)
    env['PYTHONPATH'] = os.pathsep.join(p for p in python_path if p)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    return env


def check_package(prefix, python_dir, package, lib_dir=None):
    """Run CHECK_SCRIPT with the prefix's Python on the package found in `python_dir`.

    Returns None if the package imports, serializes and publishes, else the tail
    of what the check printed.
    """
    script = CHECK_SCRIPT.format(name=package.name, check=package.check,
                                 typesupports=PYTHON_TYPESUPPORTS)
    command = [str(prefix / 'bin' / 'python'), '-c', script, str(python_dir / package.name)]
    try:
        result = subprocess.run(command, env=check_environment(prefix, python_dir, lib_dir),
                                capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if result.returncode == 0:
        return None
    return tail(result.stderr or result.stdout or f'exit status {result.returncode}')


def tail(text, lines=6):
    """The last meaningful lines of `text` (no blank or ^~~~ marker lines), joined into one."""
    kept = [line.strip() for line in text.splitlines() if line.strip(' ^~|')]
    return ' | '.join(kept[-lines:]) or '(no output)'


if __name__ == '__main__':
    sys.exit(main())
