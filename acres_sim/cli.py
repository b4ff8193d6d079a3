"""``acres-sim``: the command line of acres_sim.

Sub-commands so far: ``config show | check | convert | docs`` and ``site``.
User mistakes end with one line on stderr and exit status 2, never a traceback.
``config check`` is a linter: one line per file on stdout, status 1 if any
file is invalid.
"""

import argparse
import os
from pathlib import Path
import sys
import tempfile

from acres_sim import __version__
from acres_sim.config import ConfigError, read_layer, resolve
from acres_sim.config.options import add_config_arguments, config_from_args
from acres_sim.config.render import describe_keys, parameters_markdown, params_yaml

__all__ = ['main']


def _write_atomically(path, text):
    """Write all of ``text`` to ``path`` or nothing (temp file + rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; give it a normal mode
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _emit(text, out_path):
    if out_path:
        try:
            _write_atomically(out_path, text)
        except OSError as err:
            raise ConfigError(f'cannot write {out_path}: {err.strerror}') from None
        print(f'wrote {out_path}', file=sys.stderr)
    else:
        sys.stdout.write(text)


def cmd_config_show(args):
    config = config_from_args(args)
    rig = 'no vehicle overlay' if args.rig == 'none' else f'rig {args.rig}'
    print(f'# acres_sim {__version__}: resolved configuration, {rig}; every value checked.')
    print('# Comments give the unit and where each value came from.' if args.sources else
          '# Comments give the unit and the meaning of each key.')
    sys.stdout.write(config.to_params_yaml('sources' if args.sources else 'units'))
    return 0


def cmd_config_check(args):
    bad = 0
    for path in args.files:
        try:
            layer = read_layer(path)
            resolve([(path, layer)])  # rules across keys, on top of the defaults
        except ConfigError as err:
            print(f'{path}: error: {err}')
            bad += 1
        else:
            print(f'{path}: ok ({len(layer)} keys)')
    return 1 if bad else 0


def cmd_config_convert(args):
    layer = read_layer(args.file)
    header = (f'# Converted by acres-sim {__version__} from {Path(args.file).name}: '
              'the same keys as a ROS 2 parameter file.\n')
    _emit(header + params_yaml(layer, describe_keys(layer)), args.output)
    return 0


def cmd_config_docs(args):
    _emit(parameters_markdown(), args.output)
    return 0


def cmd_site(args):
    config = config_from_args(args)
    east_ft, north_ft, up_ft = config['site.origin_source_ft']
    lines = [
        'Site georeference of the tile (grid ENU origin)',
        f'  enabled                      {str(config["site.enabled"]).lower()}',
        '  survey grid                  EPSG:2968 NAD83(HARN) / Indiana West (US survey ft)',
        f'  origin easting, northing     {east_ft:.3f} ft, {north_ft:.3f} ft',
        f'  origin height (NAVD88)       {up_ft:.3f} ft',
        f'  datum epoch at t = 0         {config["gnss.datum.start_utc"]}',
        f'  geoid plane N0, dN/dE, dN/dN {config["gnss.datum.geoid.n0_m"]} m, '
        f'{config["gnss.datum.geoid.dn_de"]}, {config["gnss.datum.geoid.dn_dn"]}',
        '  HARN -> 2011 shift (lat, lon) {:.7e} deg, {:.7e} deg'.format(
            *config['gnss.datum.harn_to_nad83_2011_shift_deg']),
        f'  UTM zone of the odometry     {config["ins.utm_zone"]}',
        '  latitude/longitude/UTM of the origin: the geodesy issue adds them here.',
    ]
    print('\n'.join(lines))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog='acres-sim', description='Simulated sensor rig of the ACRE farm vehicles.')
    parser.add_argument('--version', action='version', version=f'acres_sim {__version__}')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND', required=True)

    config = commands.add_parser('config', help='show, check, convert the configuration')
    config_commands = config.add_subparsers(dest='config_command', metavar='ACTION',
                                            required=True)
    show = config_commands.add_parser('show', help='print the resolved configuration')
    show.add_argument('--sources', action='store_true',
                      help='comment each value with the file it came from')
    add_config_arguments(show)
    show.set_defaults(run=cmd_config_show)

    check = config_commands.add_parser('check', help='validate configuration files')
    check.add_argument('files', nargs='+', metavar='FILE')
    check.set_defaults(run=cmd_config_check)

    convert = config_commands.add_parser(
        'convert', help="write a sensors.json (or any config file) as a YAML parameter file")
    convert.add_argument('file', metavar='FILE')
    convert.add_argument('-o', '--output', metavar='OUT', help='write here instead of stdout')
    convert.set_defaults(run=cmd_config_convert)

    docs = config_commands.add_parser('docs', help='print the parameter table (Markdown)')
    docs.add_argument('-o', '--output', metavar='OUT', help='write here instead of stdout')
    docs.set_defaults(run=cmd_config_docs)

    site = commands.add_parser('site', help='print the site georeference at the tile origin')
    add_config_arguments(site)
    site.set_defaults(run=cmd_site)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ConfigError as err:
        print(f'acres-sim: error: {err}', file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `acres-sim config show | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    sys.exit(main())
