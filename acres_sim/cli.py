"""``acres-sim``: the command line of acres_sim.

Sub-commands so far: ``config show | check | convert | docs``, ``record``,
``sweep``, ``bag repair``, ``up``, ``site`` and ``geo enu | geodetic | utm``.
User mistakes end with one line on stderr and exit status 2, never a traceback;
a mistake in the arguments too (the usage is in ``--help``).
``config check`` is a linter: one line per file on stdout, status 1 if any
file is invalid.
"""

import argparse
import atexit
import datetime
import math
import os
from pathlib import Path
import re
import sys

from acres_sim import __version__
from acres_sim import blas_threads  # noqa: F401 - before anything imports numpy
from acres_sim.config import ConfigError, read_layer, resolve
from acres_sim.config.loader import packaged_notice
from acres_sim.config.options import (VIBRATION_KEYS, add_config_arguments, config_from_args,
                                      overrides_from_args)
from acres_sim.config.render import describe_keys, parameters_markdown, params_yaml
from acres_sim.config.scenario import MAX_DURATION_S
from acres_sim.config.validate import OUTAGE_END_MAX_S, shorten
from acres_sim.files import write_atomically
from acres_sim.rig import SENSOR_PROCESSES

__all__ = ['main']


def _emit(text, out_path):
    if out_path:
        try:
            write_atomically(out_path, text.encode('utf-8'))
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
    notice = packaged_notice(args.opt_config, config)
    if notice:
        print(f'# {notice}')
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


def cmd_record(args):
    # Signals first: a Ctrl-C or SIGTERM from here on stops the run where its
    # files are whole (the simulator's import and compilation take seconds).
    from acres_sim.stop_signals import StopSignals

    with StopSignals() as stop:
        return _record(args, stop)


def _record(args, stop):
    from acres_sim.record.child import prestart_writers

    _check_duration(args.duration)
    # The row and bag writers start first: their interpreters import while
    # this one imports and builds the simulation.
    writers = prestart_writers(bag=not args.no_bag)
    try:
        return _record_with(args, stop, writers)
    finally:
        for writer in writers.values():     # those the run did not take
            writer.discard()


def _record_with(args, stop, writers):
    from acres_sim.record.child import WriterProcessError
    from acres_sim.record.output import OutputError
    from acres_sim.record.event_log import read_event_log
    from acres_sim.record.runner import RecordingFailed, RecordingStopped, RecordRequest, record
    from acres_sim.rig import RigOptions, rig_config_notice

    options = RigOptions(agents=args.agents, route=args.route, laps=args.laps,
                         repeat=args.repeat or None, scene=args.scene, terrain=args.terrain,
                         duration_s=args.duration, overrides=overrides_from_args(args),
                         add_outages=tuple(args.opt_outages), config_file=args.opt_config,
                         site_file=args.opt_site, overlay_file=args.opt_vehicle_config,
                         events=tuple(args.events),
                         event_log=tuple(read_event_log(args.events_from))
                         if args.events_from else ())
    _print_notice(rig_config_notice(args.rig, options))
    progress = not args.no_progress and sys.stderr.isatty()
    out = Path(args.out)
    try:
        episode, summary = record(RecordRequest(args.rig, out, options, progress,
                                                parked=args.parked, bag=not args.no_bag,
                                                report=not args.no_report), stop, writers)
    except RecordingStopped as err:
        print(f'acres-sim: {err}', file=sys.stderr)
        return stop.exit_status
    except OutputError as err:
        raise UsageError(str(err)) from None
    except RecordingFailed as err:      # not the user's mistake: a full disk, a writer killed
        print(f'acres-sim: error: {shorten(str(err))}', file=sys.stderr)
        return 1
    except OSError as err:
        raise UsageError(f'cannot write the recording to {out}: {err.strerror or err}') from None
    except WriterProcessError as err:   # a writer process could not start
        raise UsageError(f'cannot write the recording to {out}: {err.reason}') from None
    print(summary)
    note = ' (cut short)' if episode['cut_short'] else ''
    written = sorted(str(p.relative_to(out)) + ('/' if p.is_dir() else '')
                     for p in out.iterdir() if not p.name.startswith('.'))
    print(f'{episode["simulated_s"]:g} s simulated{note} at '
          f'{episode["real_time_factor"]:.1f}x real time; in {out}/: {" ".join(written)}')
    return stop.exit_status if episode['cut_short'] else 0      # 130 Ctrl-C, 143 SIGTERM


def cmd_sweep(args):
    from acres_sim.analysis.sweep import sweep
    from acres_sim.config.sweep_plan import parse_grid_option

    if args.opt_seed is not None:
        raise UsageError(f'--seed {args.opt_seed}: a sweep takes --seeds (e.g. --seeds 1-10)')
    _check_duration(args.duration)
    grid = {}
    for text in args.grid:
        name, values = parse_grid_option(text)
        if name in grid:
            raise UsageError(f'--grid {name} is given twice; give all its values in one --grid')
        grid[name] = values
    overrides = {name: value for name, value in overrides_from_args(args).items()
                 if args.opt_vibration is None or name not in VIBRATION_KEYS}
    result = sweep(
        args.rig, seeds=args.seeds, grid=grid, out=args.out, duration=args.duration,
        workers=args.workers, scheduler=args.scheduler, bags=args.bags, reports=args.reports,
        progress=False if args.no_progress else None, agents=args.agents, route=args.route,
        laps=args.laps, repeat=args.repeat, scene=args.scene, terrain=args.terrain,
        vibration=args.opt_vibration, events=args.events, parked=args.parked,
        config=args.opt_config, vehicle_config=args.opt_vehicle_config, site=args.opt_site,
        overrides=overrides, gnss_outages=args.opt_outages)
    print(result.summary)
    complete = int((result.table['status'] == 'complete').sum()) if len(result.table) else 0
    runs = len(result.table)
    print(f'{runs} run{"" if runs == 1 else "s"}: {complete} complete ({result.skipped} skipped), '
          f'{len(result.failed)} failed; in {result.out}/: sweep.json summary.csv '
          'summary.parquet sweep.png runs/')
    for run_id, error in result.failed:
        print(f'acres-sim sweep: failed: {run_id}: {error}', file=sys.stderr)
    return 1 if result.failed else 0


def _check_duration(duration):
    if duration is not None and not 0.0 < duration <= MAX_DURATION_S:
        raise UsageError(f'--duration {duration:g}: allowed 0 < S <= {MAX_DURATION_S:g} '
                         '(a week)')


def _print_notice(notice):
    """A packaged_notice on stderr (nothing for None)."""
    if notice:
        print(f'acres-sim: note: {notice}', file=sys.stderr)


def cmd_evaluate(args):
    from acres_sim.analysis.evaluate import RunError, evaluate, summary_text
    from acres_sim.analysis.run_truth import is_bag
    from acres_sim.record.output import OutputError
    from acres_sim.rig import RigOptions

    run = Path(args.run_dir)
    if args.out:
        out = Path(args.out)
    elif is_bag(run):
        raise UsageError(f'{run} is a bag: give --out DIR for the evaluation')
    else:
        out = run / 'eval'
    options = RigOptions(agents=args.agents, overrides=overrides_from_args(args),
                         add_outages=tuple(args.opt_outages), config_file=args.opt_config,
                         site_file=args.opt_site, overlay_file=args.opt_vehicle_config,
                         namespace=args.namespace or '')
    if args.rig is None and options != RigOptions():
        raise UsageError('--agents, --namespace and the configuration options describe the '
                         'rig of a live bag: give --rig with them')
    try:
        summary = evaluate(run, args.estimates or None, out, vehicle=args.vehicle,
                           align=args.align, datum=args.datum, frame=args.frame,
                           child_frame=args.child_frame, stale_after_s=args.stale_after,
                           plots=not args.no_plots, rig=args.rig,
                           rig_options=options if args.rig else None)
    except (RunError, OutputError) as err:
        raise UsageError(str(err)) from None
    print(summary_text(summary))
    print(f'in {out}/: ' + ' '.join(sorted(p.name for p in out.iterdir()
                                           if not p.name.startswith('.'))))
    return 0


def cmd_bag_repair(args):
    from acres_sim.record.repair import RepairError, repair_bag

    try:
        repaired = repair_bag(Path(args.dir))
    except RepairError as err:
        raise UsageError(str(err)) from None
    if not repaired.damaged:
        print(f'{repaired.path}: the bag is whole ({repaired.messages} messages); '
              'nothing to repair')
        return 0
    print(f'{repaired.path}: repaired ({repaired.damaged}): {repaired.messages} messages on '
          f'{repaired.topics} topics, up to {_utc_of_ns(repaired.end_ns)} (ROS time); the '
          'damaged file is kept as *.mcap.damaged')
    return 0


def cmd_inject(args):
    from acres_sim.config.events import parse_event
    from acres_sim.inject import InjectFailed, InjectRefused, inject_event
    from acres_sim.network import network_environment

    event = None
    if args.event is not None:
        events = parse_event(args.event)
        if len(events) != 1:
            raise ConfigError(f'--event {args.event!r}: one event at a time')
        event = events[0]
    os.environ.update(network_environment('loopback')[0])
    try:
        entry = inject_event(event, args.clear, args.namespace, args.timeout)
    except InjectRefused as err:
        print(f'acres-sim: refused: {err}', file=sys.stderr)
        return 2
    except InjectFailed as err:
        print(f'acres-sim: error: {err}', file=sys.stderr)
        return 1
    if entry['log'] == 'inject':
        e = entry['event']
        print(f"injected {e['name']} ({e['type']}) for {', '.join(e['vehicles'])} "
              f"from {e['start_s']:g} s (step {entry['step']})")
    else:
        print(f"cleared {entry['name']} from step {entry['step']}")
    return 0


def cmd_up(args):
    from acres_sim.network import network_environment
    from acres_sim.rig import RigOptions, rig_config_notice, rig_processes
    from acres_sim.up import run_nodes

    _check_duration(args.duration)
    sim = {}
    if args.cmd_vel_type:
        sim['cmd_vel.type'] = args.cmd_vel_type
    if args.no_tf:
        sim['publish_tf'] = False
    if args.parked:
        sim['follow_route'] = False
    if args.cmd_vel_timeout is not None:
        sim['cmd_vel.timeout_s'] = args.cmd_vel_timeout
    if args.start_timeout is not None:
        sim['start_timeout_s'] = args.start_timeout
    if args.wait_for_subscribers is not None:
        sim['start_subscribers'] = args.wait_for_subscribers
    options = RigOptions(agents=args.agents, route=args.route, laps=args.laps,
                         repeat=args.repeat or None, scene=args.scene,
                         terrain=args.terrain, rtf=args.rtf,
                         duration_s=args.duration, overrides=overrides_from_args(args),
                         add_outages=tuple(args.opt_outages), config_file=args.opt_config,
                         site_file=args.opt_site, overlay_file=args.opt_vehicle_config,
                         events=tuple(args.events), sim=sim, network=args.network,
                         namespace=args.namespace, sensor_processes=args.sensor_processes)
    nodes = rig_processes(args.rig, options)
    network = network_environment(args.network)[1]
    _print_notice(rig_config_notice(args.rig, options))
    if args.print_nodes is not None:
        return _print_nodes(nodes, args.print_nodes, network)
    print(f'acres-sim up: {network}', file=sys.stderr)
    return run_nodes(nodes)


def _print_nodes(nodes, folder, network):
    """``up --print-nodes [DIR]``: each process's command line, and the
    parameter file of each of its nodes -- printed, or written into DIR for
    the commands to use later."""
    from acres_sim.up import params_document, params_file_name, shell_command, \
        write_params_files

    def what(node):
        if node.nodes:
            return (f'{node.executable}, ' + ', '.join(m.full_name for m in node.nodes)
                    + ' in one process')
        return f'{node.executable}, {len(node.parameters)} parameters'

    if folder:
        paths = write_params_files(nodes, Path(folder).resolve())   # ParamsFileError: one line
        print(f'# {network}')
        for node, path in zip(nodes, paths):
            files = ', '.join(str(p) for p in path) if node.nodes else str(path)
            print(f'# {node.full_name}: {what(node)}; parameters in {files}')
            print(shell_command(node, path))
        return 0
    print(f'# {network}')
    for node in nodes:
        members = node.nodes or (node,)
        names = [params_file_name(m) for m in members]
        print(f'# {node.full_name}: {what(node)}; its command, with '
              + ('these parameter files' if node.nodes else 'this parameter file')
              + f' saved as {", ".join(names)} (or use --print-nodes DIR):')
        print(shell_command(node, names if node.nodes else names[0]))
        for member in members:
            print(params_document(member))
    return 0


class UsageError(ConfigError):
    """A command-line value that makes no sense (one line for the user)."""


def cmd_site(args):
    config = config_from_args(args)
    east_ft, north_ft, up_ft = config['site.origin_source_ft']
    lines = [
        'Site georeference of the tile',
        f'  georeferenced                {str(config["site.enabled"]).lower()}',
        '  survey grid                  EPSG:2968 NAD83(HARN) / Indiana West (US survey ft)',
        f'  origin easting, northing     {east_ft:.3f} ft, {north_ft:.3f} ft',
        f'  origin height (NAVD88)       {up_ft:.3f} ft',
        f'  datum epoch at t = 0         {config["gnss.datum.start_utc"]}',
        f'  geoid plane N0, dN/dE, dN/dN {config["gnss.datum.geoid.n0_m"]} m, '
        f'{config["gnss.datum.geoid.dn_de"]}, {config["gnss.datum.geoid.dn_dn"]}',
        '  HARN -> 2011 shift (lat, lon) {:.7e} deg, {:.7e} deg'.format(
            *config['gnss.datum.harn_to_nad83_2011_shift_deg']),
        '',
        'The tile origin (grid ENU 0, 0, 0) in every frame:',
        describe_point(config, 0.0, 0.0, 0.0, args.t, args.zone),
    ]
    print('\n'.join(lines))
    return 0


def describe_point(config, e, n, u, t_s, zone=None):
    """Every frame of grid point (e, n, u) at episode time t_s, as a small report."""
    from acres_sim.core.geo import FRAMES, US_SURVEY_FOOT_M, utm_forward
    from acres_sim.pipeline.models import site_georeference

    site = site_georeference(config)
    zone = zone or config['ins.utm_zone']
    east_ft, north_ft, up_ft = config['site.origin_source_ft']
    navd88, undulation = site.heights(e, n, u)
    lines = [
        f'  episode time {t_s:g} s = epoch {site.epoch(t_s):.6f} '
        f'({config["gnss.datum.start_utc"]} + t)',
        f'  grid ENU        e {e:.4f} m, n {n:.4f} m, u {u:.4f} m',
        f'  survey grid     E {east_ft + e / US_SURVEY_FOOT_M:.4f} ftUS, '
        f'N {north_ft + n / US_SURVEY_FOOT_M:.4f} ftUS, '
        f'NAVD88 {up_ft + u / US_SURVEY_FOOT_M:.4f} ftUS = {navd88:.4f} m',
        f'  geoid           N {undulation:.4f} m (plane fit to GEOID12B)',
        f'  {"frame":12} {"latitude [deg]":>15} {"longitude [deg]":>16} {"h [m]":>10}'
        f' {f"UTM {zone} E [m]":>14} {f"UTM {zone} N [m]":>15}',
    ]
    on_earth = {}
    for frame in FRAMES:
        lat, lon, h = site.enu_to_geodetic(e, n, u, t_s, frame)
        easting, northing, _gamma, _k = utm_forward(lat, lon, zone)
        _check_on_earth(lat, lon, [h, easting, northing], (e, n, u))
        on_earth[frame] = lat, lon
        lines.append(f'  {frame:12} {lat:15.9f} {lon:16.9f} {h:10.4f} '
                     f'{easting:14.4f} {northing:15.4f}')
    lat, lon, _h = site.enu_to_geodetic(e, n, u, t_s, 'nad83_2011')
    _e, _n, gamma, scale = utm_forward(lat, lon, zone)
    alpha = site.grid_rotation_deg(e, n, u, t_s, 'nad83_2011', zone)
    _check_on_earth(lat, lon, [navd88, undulation, gamma, scale, alpha], (e, n, u))
    lines.append(f'  UTM {zone} (NAD83(2011)): convergence gamma {math.degrees(gamma):.5f} deg, '
                 f'scale k {scale:.8f}, grid rotation alpha {alpha:.4f} deg')
    _warn_outside_the_areas(*on_earth['nad83_harn'], zone)
    return '\n'.join(lines)


def _check_on_earth(lat, lon, numbers, enu):
    """Refuse what the projections turn into no point (far beyond their area)."""
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0
            and all(math.isfinite(x) for x in numbers)):
        grid = ', '.join(f'{x:g}' for x in enu)
        raise UsageError(f'grid ENU ({grid}) m is too far from the tile (at 0, 0, 0): the '
                         'projections give no point on the Earth there (latitude '
                         f'{lat:g}, longitude {lon:g} deg)')


def _warn_outside_the_areas(lat, lon, zone):
    """A warning when (lat, lon) NAD83(HARN) lies outside the area of use of the
    tile's grid EPSG:2968 or of UTM ``zone``: the numbers there lose accuracy."""
    from acres_sim.core.geo import AREA_OF_USE_DEG, zone_area_deg

    def outside(area):
        west, south, east, north = area
        return not (south <= lat <= north and west <= lon <= east)

    def bounds(area):
        west, south, east, north = area
        return f'lat {south:g}..{north:g}, lon {west:g}..{east:g}'

    areas = [(name, area) for name, area in (('EPSG:2968', AREA_OF_USE_DEG),
                                             (f'UTM zone {zone}', zone_area_deg(zone)))
             if outside(area)]
    if areas:
        print(f'acres-sim: warning: latitude {lat:.4f}, longitude {lon:.4f} deg is outside the '
              'area of ' + ' and of '.join(f'{name} ({bounds(area)} deg)' for name, area in areas)
              + '; the values there lose accuracy', file=sys.stderr)


def _check_latlon(lat, lon, given='latitude / longitude'):
    if not -90.0 <= lat <= 90.0 or not -180.0 <= lon <= 180.0:
        raise UsageError(f'{given}: latitude {lat:g} / longitude {lon:g} is not a point on the '
                         'Earth (allowed -90..90, -180..180 degrees)')


def _utc_of_ns(t_ns):
    """A ROS time [ns] as an ISO 8601 UTC time to the microsecond."""
    utc = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) \
        + datetime.timedelta(microseconds=t_ns // 1000)
    return utc.isoformat().replace('+00:00', 'Z')


def cmd_geo(args):
    import numpy as np

    with np.errstate(all='ignore'):    # a point too far off is refused, not warned about
        return _geo(args)


def _geo(args):
    from acres_sim.core.geo import utm_inverse
    from acres_sim.pipeline.models import site_georeference

    config = config_from_args(args)
    site = site_georeference(config)
    zone = args.zone or config['ins.utm_zone']
    if args.geo_command == 'enu':
        e, n, u = args.e, args.n, args.u
    else:
        if args.geo_command == 'utm':
            lat, lon = utm_inverse(args.easting, args.northing, zone)
            _check_latlon(lat, lon, f'UTM {zone} E {args.easting:g} m, N {args.northing:g} m')
        else:
            lat, lon = args.lat, args.lon
            _check_latlon(lat, lon)
        e, n, u = site.geodetic_to_enu(lat, lon, args.h, args.t, args.frame)
    point = describe_point(config, e, n, u, args.t, zone)
    print(f'Point in every frame (site origin {config["site.origin_source_ft"]} ftUS):')
    print(point)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake in one line and a pointer to --help (not the whole
    usage), and with values such as -5:10 or -1e3 read as values, not as options."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse takes '-' + digits (or a dot and digits) for a value, nothing else;
        # none of our options starts with '-' and a digit, so every such word is a value.
        self._negative_number_matcher = re.compile(r'^-\.?[0-9]')
        self.set_defaults(parser_of_command=self)   # the last command's parser wins

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but words left over are the mistake of the command they follow."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parsed.parser_of_command.error(f'unrecognized arguments: {" ".join(extras)}')
        return parsed

    def error(self, message):
        self.exit(2, f'{self.prog}: error: {shorten(message)} (see {self.prog} --help)\n')


def _finite(text):
    """argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f'{text!r} is not a finite number')
    return value


def _episode_time(text):
    """argparse type: an episode time in seconds, within +-1e9 s (31 years)."""
    value = _finite(text)
    if abs(value) > OUTAGE_END_MAX_S:
        raise argparse.ArgumentTypeError(f'{text} s is outside the episode times '
                                         f'(|t| <= {OUTAGE_END_MAX_S:g} s)')
    return value


def build_parser():
    parser = _Parser(
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

    rec = commands.add_parser('record', help='record a run headless: rows, a rosbag2, a report')
    _add_rig(rec)
    rec.add_argument('--duration', type=float, metavar='S',
                     help="simulated seconds (default: the scenario's, else 120)")
    rec.add_argument('--out', default='runs/latest', metavar='DIR',
                     help='output folder: new, empty or a previous recording, which is '
                          'replaced (default %(default)s)')
    rec.add_argument('--agents', type=int, metavar='N',
                     help='N copies of the vehicle of a one-vehicle rig (agent k in namespace '
                          'agent<k> and folder agent<k>/, with its own seeds)')
    rec.add_argument('--route', metavar='NAME|FILE',
                     help='route of every vehicle: acre_demo, loop, figure8, field, north_field, '
                          'west_field or a route file (default: the scenario\'s)')
    _add_laps(rec)
    rec.add_argument('--scene', metavar='FILE',
                     help="obstacle scene (default: the scenario's, else the ACRE farmstead)")
    _add_terrain(rec)
    rec.add_argument('--parked', action='store_true',
                     help='no route follower: the vehicles stay where they spawn')
    rec.add_argument('--events-from', metavar='BAG|FILE', dest='events_from',
                     help="repeat a live run: the injected events of its event log (a bag "
                          "of it, or the JSON lines of the log), with the same scenario")
    rec.add_argument('--no-progress', action='store_true', help='no progress bar')
    rec.add_argument('--no-bag', action='store_true',
                     help='write no rosbag2 (bag/) and start no bag writer: the same rows, '
                          'a fraction of the disk and time (for sweeps)')
    rec.add_argument('--no-report', action='store_true',
                     help='draw no report.png (the summary is still printed and in '
                          'episode.json)')
    add_config_arguments(rec, vehicle_choice=False)
    rec.set_defaults(run=cmd_record)

    swp = commands.add_parser('sweep', help='record and evaluate a scenario over seeds and a '
                                            'grid of parameters, on a Dask cluster')
    _add_rig(swp)
    swp.add_argument('--seeds', metavar='SEEDS',
                     help="the seeds: 1-100, 1,5,9 or 1-10,20 (default: the scenario's sweep "
                          'block)')
    swp.add_argument('--grid', metavar='KEY=V1,V2,...', action='append', default=[],
                     help='a grid axis: a configuration key (applied as --set KEY=V), terrain, '
                          'route or vibration, with its values (a YAML list for list values: '
                          "KEY='[[\"60:90\"], [\"60:150\"]]'); repeatable, the runs are "
                          'the product of the axes and the seeds')
    swp.add_argument('--duration', type=float, metavar='S',
                     help="simulated seconds of each run (default: the scenario's, else 120)")
    swp.add_argument('--out', default='sweeps/latest', metavar='DIR',
                     help='the sweep folder: new, empty, or this sweep to go on with it '
                          '(default %(default)s)')
    swp.add_argument('--workers', type=int, metavar='N',
                     help='worker processes of the local Dask cluster (default: one per core)')
    swp.add_argument('--scheduler', metavar='tcp://HOST:PORT',
                     help='run on the Dask cluster of this scheduler instead of a local one '
                          '(its workers must see the output folder)')
    swp.add_argument('--bags', action='store_true', help="keep each run's rosbag2")
    swp.add_argument('--reports', action='store_true', help="keep each run's report.png")
    swp.add_argument('--agents', type=int, metavar='N',
                     help='N copies of the vehicle of a one-vehicle rig in every run')
    swp.add_argument('--route', metavar='NAME|FILE', help='route of every vehicle')
    _add_laps(swp)
    swp.add_argument('--scene', metavar='FILE', help="obstacle scene (default: the scenario's)")
    _add_terrain(swp)
    swp.add_argument('--parked', action='store_true',
                     help='no route follower: the vehicles stay where they spawn')
    swp.add_argument('--no-progress', action='store_true', help='no status line')
    add_config_arguments(swp, vehicle_choice=False)
    swp.set_defaults(run=cmd_sweep)

    inj = commands.add_parser('inject', help='inject a fault event into the running rig, or '
                                             'clear one (docs/events.md)')
    what = inj.add_mutually_exclusive_group(required=True)
    what.add_argument('--event', metavar='YAML',
                      help="the event, as in a scenario's events: list, e.g. '{type: "
                           "gnss_denial, duration_s: 30}' (from now, or from its start_s)")
    what.add_argument('--clear', metavar='NAME', help='end the event NAME now, for good')
    inj.add_argument('--namespace', default='', metavar='NS',
                     help="the rig's namespace (default: none)")
    inj.add_argument('--timeout', type=float, default=10.0, metavar='S',
                     help='wait this long for the sim node\'s answer (default %(default)s)')
    inj.set_defaults(run=cmd_inject)

    ev = commands.add_parser(
        'evaluate', help='score estimates (an EKF, the INS, a receiver) against the truth of '
                         'a recording, and the honesty of their covariances')
    ev.add_argument('run_dir', metavar='RUN',
                    help='a recording folder (acres-sim record), or the bag of a live run '
                         '(ros2 bag record with the vehicles\' sim/truth; give --rig)')
    ev.add_argument('--rig', metavar='NAME|FILE',
                    help='for a live bag: the rig or scenario it ran (its vehicles and mounts), '
                         'with the options below it ran with (--agents, --namespace, '
                         '--config, --vehicle-config, --site, --set, ...)')
    ev.add_argument('--agents', type=int, metavar='N',
                    help='for a live bag: the rig ran with --agents N')
    ev.add_argument('--namespace', metavar='NS',
                    help='for a live bag: the namespace the whole rig ran under (default: '
                         'found from the vehicles\' sim/truth topics)')
    ev.add_argument('--estimate', dest='estimates', action='append', default=[],
                    metavar='SOURCE',
                    help='what to score (repeatable): BAG:TOPIC (nav_msgs/Odometry, '
                         'geometry_msgs/PoseWithCovarianceStamped or PoseStamped, '
                         'sensor_msgs/NavSatFix), BAG:tf:PARENT:CHILD, a TUM file, /TOPIC or '
                         'tf:PARENT:CHILD of the run\'s own bag, or ins / gnss (the rig\'s '
                         'own rows); default: the INS and GNSS receiver of every vehicle')
    ev.add_argument('--out', metavar='DIR',
                    help='where summary.json, summary.md and the pictures go (default RUN/eval; '
                         'new, empty or an earlier evaluation)')
    ev.add_argument('--vehicle', metavar='NAME',
                    help="whose truth (default: found from the estimate's topic or frames)")
    ev.add_argument('--align', choices=('auto', 'none', 'se3', 'translation'), default='auto',
                    help='align the estimate to the truth first: se3 (rotation and '
                         'translation, evo\'s Umeyama), translation (mean offset), none; auto '
                         '(default): se3 for a frame the simulator does not define (odom), '
                         'none for map and utm')
    ev.add_argument('--datum', choices=('wgs84_g2139', 'nad83_2011', 'nad83_harn'),
                    help='datum of UTM or latitude/longitude estimates (default: as the rig '
                         'gives its own topics; the INS\'s for a utm frame, the receiver\'s '
                         'for a NavSatFix)')
    ev.add_argument('--frame', metavar='FRAME',
                    help='the frame the estimate is in, where the source does not say (a TUM '
                         'file: map)')
    ev.add_argument('--child-frame', metavar='FRAME',
                    help='the point the estimate claims, where the source does not say '
                         '(default base_footprint; an Odometry names its child frame)')
    ev.add_argument('--stale-after', type=float, metavar='S',
                    help='an estimate older than S is not available (default: three of its '
                         'sample intervals)')
    ev.add_argument('--no-plots', action='store_true', help='no pictures')
    add_config_arguments(ev, vehicle_choice=False)
    ev.set_defaults(run=cmd_evaluate)

    bag = commands.add_parser('bag', help='work on a recorded bag')
    bag_commands = bag.add_subparsers(dest='bag_command', metavar='ACTION', required=True)
    repair = bag_commands.add_parser(
        'repair', help='make a bag whose writer died (full disk, kill) readable again')
    repair.add_argument('dir', metavar='DIR', help='the bag folder, or a recording folder')
    repair.set_defaults(run=cmd_bag_repair)

    up = commands.add_parser('up', help='run the live ROS 2 rig: the sim, GNSS and IMU nodes '
                                        '(Ctrl-C stops them)')
    _add_rig(up)
    up.add_argument('--duration', type=float, metavar='S',
                    help='simulated seconds, then stop (default: run until Ctrl-C)')
    up.add_argument('--rtf', type=float, metavar='F',
                    help='real-time factor: 1 real time (default), 0 as fast as the '
                         'sensor nodes keep up')
    up.add_argument('--agents', type=int, metavar='N',
                    help='N copies of the vehicle of a one-vehicle rig (agent k in namespace '
                         'agent<k>, with its own seeds)')
    up.add_argument('--route', metavar='NAME|FILE', help='route of every vehicle')
    up.add_argument('--namespace', default='', metavar='NS',
                    help='ROS namespace of the whole rig: every topic but /clock, /tf, '
                         '/tf_static and /diagnostics under /NS (a vehicle\'s own namespace '
                         'nests below it)')
    _add_laps(up)
    up.add_argument('--scene', metavar='FILE',
                    help="obstacle scene of the GNSS sky view (default: the scenario's, else "
                         'the ACRE farmstead)')
    _add_terrain(up)
    up.add_argument('--cmd-vel-type', choices=['twist', 'twist_stamped'],
                    help='message type of cmd_vel (default twist)')
    up.add_argument('--cmd-vel-timeout', type=float, metavar='S',
                    help='a vehicle whose last cmd_vel is older than S (sim time) stops '
                         '(default 0.5)')
    up.add_argument('--parked', action='store_true',
                    help='no route follower: the vehicles stay parked until their first cmd_vel')
    up.add_argument('--no-tf', action='store_true',
                    help='no TF utm -> base_footprint (an EKF owns the transform)')
    up.add_argument('--start-timeout', type=float, metavar='S',
                    help='wait this long at most for the sensor nodes before step 0 '
                         '(default 30)')
    up.add_argument('--wait-for-subscribers', type=int, metavar='N',
                    help='before step 0 also wait for N subscribers on every sim topic '
                         '(e.g. 1 for a ros2 bag record started first)')
    up.add_argument('--sensor-processes', choices=SENSOR_PROCESSES, default=SENSOR_PROCESSES[0],
                    help='the sensor nodes: all in one process (default), one process per '
                         'vehicle, or each node in its own')
    up.add_argument('--print-nodes', nargs='?', const='', metavar='DIR',
                    help='print each node\'s command line and parameter file, start nothing; '
                         'with DIR, write the parameter files there for the printed commands')
    up.add_argument('--network', choices=['loopback', 'lan'], default='loopback',
                    help='loopback (default): DDS stays on this machine unless you set '
                         'ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_LOCALHOST_ONLY or ROS_STATIC_PEERS; '
                         'lan: other machines on the ROS_DOMAIN_ID see the rig')
    add_config_arguments(up, vehicle_choice=False)
    up.set_defaults(run=cmd_up)

    site = commands.add_parser('site', help='print the site georeference at the tile origin')
    _add_time_and_zone(site)
    add_config_arguments(site)
    site.set_defaults(run=cmd_site)

    geo = commands.add_parser('geo', help='convert a point between grid ENU, the geodetic '
                                          'frames and UTM, printing every frame')
    geo_commands = geo.add_subparsers(dest='geo_command', metavar='FROM', required=True)
    enu = geo_commands.add_parser('enu', help='from grid ENU metres of the tile')
    for name in ('e', 'n', 'u'):
        enu.add_argument(name, type=_finite, help=f'grid {name} [m]')
    geodetic = geo_commands.add_parser('geodetic', help='from latitude, longitude, height')
    geodetic.add_argument('lat', type=_finite, help='latitude [deg]')
    geodetic.add_argument('lon', type=_finite, help='longitude [deg], east positive')
    geodetic.add_argument('h', type=_finite, help='ellipsoidal height [m]')
    utm = geo_commands.add_parser('utm', help='from UTM easting, northing, height')
    utm.add_argument('easting', type=_finite, help='[m]')
    utm.add_argument('northing', type=_finite, help='[m]')
    utm.add_argument('h', type=_finite, help='ellipsoidal height [m]')
    for sub in (enu, geodetic, utm):
        _add_time_and_zone(sub)
        if sub is not enu:
            sub.add_argument('--frame', default='wgs84_g2139',
                             choices=['wgs84_g2139', 'nad83_harn', 'nad83_2011'],
                             help='frame of the given coordinates (default: %(default)s)')
        add_config_arguments(sub)
        sub.set_defaults(run=cmd_geo)
    return parser


def _add_rig(parser):
    parser.add_argument('--rig', default='polaris', metavar='NAME|FILE',
                        help='a packaged rig or scenario (polaris, maxxum, mixed, fleet), or a '
                             'rig or scenario file (default %(default)s)')


def _add_terrain(parser):
    parser.add_argument('--terrain', metavar='flat|NAME|FILE',
                        help='ground under the wheels: flat (the plane), a packaged terrain '
                             '(acre) or a terrain file (default: the scenario\'s, else flat)')
    parser.add_argument('--event', metavar='YAML', dest='events', action='append', default=[],
                        help="add a fault event to the scenario's, written as in its events: "
                             "list, e.g. '{type: fix_cap, state: dgps, start_s: 60, "
                             "duration_s: 30}'; repeatable (docs/events.md)")


def _add_laps(parser):
    """--laps N and --repeat: how a closed route is driven."""
    laps = parser.add_mutually_exclusive_group()
    laps.add_argument('--laps', type=int, metavar='N',
                      help='drive a closed route (loop, figure8, north_field, west_field) N '
                           'times, then park where it started')
    laps.add_argument('--repeat', action='store_true',
                      help='drive a closed route again and again until the run ends')


def _add_time_and_zone(parser):
    parser.add_argument('--t', type=_episode_time, default=0.0, metavar='SECONDS',
                        help='episode time, within +-1e9 s; the epoch is '
                             'gnss.datum.start_utc + t (default 0)')
    parser.add_argument('--zone', type=int, choices=range(1, 61), metavar='ZONE',
                        help='UTM zone (default: ins.utm_zone)')


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ConfigError as err:          # UsageError too
        print(f'acres-sim: error: {err}', file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `acres-sim config show | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


#: the commands whose process ends without the interpreter's teardown (run())
ENDS_AT_ONCE = frozenset({'record'})


def run(argv=None):
    """The ``acres-sim`` program (its console script and ``python -m
    acres_sim.cli``): :func:`main`, and the process's exit status.  After a
    recording the process ends at once: the exit handlers run (atexit's,
    multiprocessing's) and the standard streams are flushed, but the
    interpreter does not tear down what the run built (about 0.06 s after a
    600 s run; every file is closed by then)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    code = main(argv)
    if argv[:1] and argv[0] in ENDS_AT_ONCE:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):     # a closed pipe, a closed stream
                pass
        os._exit(code or 0)
    return code


if __name__ == '__main__':
    sys.exit(run())
