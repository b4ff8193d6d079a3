#!/usr/bin/env python3
"""The live rig over DDS (loopback): the processes of ``acres_sim.rig.rig_processes``,
as ``acres-sim up`` starts them (``--sensor-processes``: the sensor nodes in one
process, the default, one per vehicle, or each in its own).

* ``rtf``: one Polaris rig (sim, GNSS, IMU) at rtf 0, as fast as the sensor
  nodes keep up: the real-time factor reached (the sim node's summary), CPU
  per simulated second, peak RSS and peak PSS (the proportional share: pages
  shared with the other processes, such as numba's LLVM, counted in part) of
  each process, and per node (from /proc);
* ``agents``: N Polaris copies at real time: the real-time factor held, the
  INS latency (from each epoch's due wall time to its first message, the sim
  node's summary: median / p99 / max) and the sensor nodes' gaps, for growing N;
  with ``--subscribe TOPIC,...`` a subscriber process takes those topics of
  every vehicle (as a localization stack per vehicle would: the nodes publish
  only where someone subscribes), its CPU and message count shown apart;
* ``startup``: wall time from starting the nodes to the first /clock, INS,
  IMU and GNSS message at a subscriber, cold (an empty numba cache: every
  kernel compiles) and warm.

No assertions; the machine is shared, so figures vary from run to run.
``ROS_DOMAIN_ID`` defaults to 93 and discovery stays on loopback.
"""

import argparse
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', '93')

from acres_sim.rig import SENSOR_PROCESSES, RigOptions, rig_processes  # noqa: E402
from acres_sim.up import child_environment, node_command, write_params_files  # noqa: E402

TICK_S = 1.0 / os.sysconf('SC_CLK_TCK')
SUMMARY = re.compile(r'simulated ([\d.]+) s in ([\d.]+) s of wall time \(([\d.]+)x real time')
LATENCY = re.compile(r'INS published ([\d.]+) / ([\d.]+) / ([\d.]+) ms')


def _cpu_s(pid):
    """User + system CPU seconds of process ``pid`` so far (None once it is gone)."""
    try:
        stat = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return (int(stat[11]) + int(stat[12])) * TICK_S


class Rig:
    """The nodes of a rig as child processes, their CPU and memory sampled."""

    def __init__(self, nodes, folder, env=None):
        self.nodes, self.processes, self.logs = nodes, [], []
        self.peak_rss_mb = [0.0] * len(nodes)
        self.peak_pss_mb = [0.0] * len(nodes)
        self.cpu_s = [0.0] * len(nodes)
        for i, (node, params) in enumerate(zip(nodes, write_params_files(nodes, folder))):
            log = open(Path(folder) / f'{i:02d}.log', 'w+')
            self.logs.append(log)
            self.processes.append(subprocess.Popen(
                node_command(node, params), env={**(env or child_environment()), **node.env},
                stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def sample(self):
        for i, p in enumerate(self.processes):
            try:
                status = Path(f'/proc/{p.pid}/status').read_text()
                rollup = Path(f'/proc/{p.pid}/smaps_rollup').read_text()
            except OSError:
                continue
            cpu_s = _cpu_s(p.pid)
            if cpu_s is None:
                continue
            hwm = re.search(r'VmHWM:\s+(\d+) kB', status)
            if hwm:
                self.peak_rss_mb[i] = max(self.peak_rss_mb[i], int(hwm.group(1)) / 1024)
            pss = re.search(r'^Pss:\s+(\d+) kB', rollup, re.MULTILINE)
            if pss:
                self.peak_pss_mb[i] = max(self.peak_pss_mb[i], int(pss.group(1)) / 1024)
            self.cpu_s[i] = cpu_s

    def wait_for_sim(self, timeout, other=None):
        """Sample until the sim node ends; the CPU used before its loop began
        (imports, JIT, discovery) is left out of ``cpu_s``, and of the CPU of
        the process ``other`` (a Popen, e.g. a subscriber), returned."""
        end = time.monotonic() + timeout
        baseline = other_baseline = None
        while self.processes[0].poll() is None and time.monotonic() < end:
            self.sample()
            if baseline is None and 'running ' in Path(self.logs[0].name).read_text():
                baseline = list(self.cpu_s)
                other_baseline = _cpu_s(other.pid) if other is not None else None
            time.sleep(0.2)
        self.startup_cpu_s = baseline or [0.0] * len(self.cpu_s)
        self.cpu_s = [c - b for c, b in zip(self.cpu_s, self.startup_cpu_s)]
        if other is None:
            return None
        return (_cpu_s(other.pid) or 0.0) - (other_baseline or 0.0)

    def stop(self):
        for p in self.processes:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in self.processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        texts = []
        for log in self.logs:
            log.seek(0)
            texts.append(log.read())
            log.close()
        return texts


def subscribable():
    """The topics --subscribe takes, and their types: a Polaris's outputs in its
    namespace (its channels' own table)."""
    from acres_sim.config import load_config
    from acres_sim.pipeline.vehicle import build_vehicle

    vehicle = build_vehicle(load_config(rig='polaris'), 'polaris')
    return {topic: kind for channel in vehicle.channels.values()
            for topic, kind in channel.topic_types if not topic.startswith('/')}

# A subscriber of TOPIC=TYPE ... (raw, reliable, depth 10) until SIGINT: then the count.
SUBSCRIBER = '''
import sys
import rclpy
from rclpy.signals import SignalHandlerOptions
from acres_sim.ros.message_types import message_class
from acres_sim.ros.qos import OUTPUT_QOS
from acres_sim.ros.take import fast_executor
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('bench_subscriber')
count = [0]
def got(_data):
    count[0] += 1
for spec in sys.argv[1:]:
    topic, kind = spec.split('=')
    node.create_subscription(message_class(kind), topic, got, OUTPUT_QOS, raw=True)
executor = fast_executor()
executor.add_node(node)
try:
    while True:
        executor.spin_once(timeout_sec=0.1)
except KeyboardInterrupt:
    print('messages', count[0], flush=True)
'''


def subscriber_command(topics, agents):
    """The command of a subscriber of ``topics`` (relative topic -> type) of
    agents 0 .. agents-1."""
    specs = [f'{"" if k == 0 else f"/agent{k}"}/{topic}={kind}'
             for k in range(agents) for topic, kind in topics.items()]
    return [sys.executable, '-c', SUBSCRIBER, *specs]


def sim_summary(text):
    m, lat = SUMMARY.search(text), LATENCY.search(text)
    return (tuple(float(x) for x in m.groups()) if m else None,
            tuple(float(x) for x in lat.groups()) if lat else None)


def ground_options(terrain, vibration, sensor_processes=SENSOR_PROCESSES[0]):
    """The RigOptions fields of ``--terrain``, ``--vibration`` and ``--sensor-processes``."""
    on = {'vibration.engine': True, 'vibration.parked_jitter': True} if vibration else {}
    return {'terrain': terrain, 'overrides': on, 'sensor_processes': sensor_processes}


def describe(ground):
    return (f'terrain {ground["terrain"]}{", vibration" if ground["overrides"] else ""}, '
            f'sensor processes: {ground["sensor_processes"]}')


def bench_rtf(seconds, ground):
    nodes = rig_processes('polaris', RigOptions(rtf=0.0, duration_s=seconds, **ground))
    with tempfile.TemporaryDirectory() as folder:
        rig = Rig(nodes, folder)
        rig.wait_for_sim(600 + seconds)
        logs = rig.stop()
    summary, _ = sim_summary(logs[0])
    print(f'\n## One Polaris rig at rtf 0, {seconds:g} s simulated, {describe(ground)}')
    if summary is None:
        print('no summary from the sim node:\n' + logs[0][-2000:])
        return
    sim_s, wall_s, rtf = summary
    print(f'real-time factor {rtf:.1f}x ({sim_s:g} s in {wall_s:.1f} s)')
    print('| process | nodes | CPU per simulated s [ms] | CPU share of the run | peak RSS [MB] '
          '| per node [MB] | peak PSS [MB] | per node [MB] |')
    print('|---|---|---|---|---|---|---|---|')
    for node, cpu, rss, pss in zip(nodes, rig.cpu_s, rig.peak_rss_mb, rig.peak_pss_mb):
        count = len(node.nodes) or 1
        print(f'| {node.full_name} | {count} | {1e3 * cpu / sim_s:.1f} | {cpu / wall_s:.0%} '
              f'| {rss:.0f} | {rss / count:.0f} | {pss:.0f} | {pss / count:.0f} |')


def bench_agents(counts, seconds, ground, subscribe=None):
    print(f'\n## N Polaris copies at real time, {seconds:g} s simulated each, '
          f'{describe(ground)}'
          + (f', a subscriber of {", ".join(subscribe)} of every vehicle' if subscribe else ''))
    print('| agents | rtf held | INS latency median / p99 / max [ms] | sim CPU | all CPU '
          '| sim RSS [MB] | RSS per sensor node [MB] | sensor gaps |'
          + (' subscriber CPU, messages |' if subscribe else ''))
    print('|---|---|---|---|---|---|---|---|' + ('---|' if subscribe else ''))
    for n in counts:
        nodes = rig_processes('polaris', RigOptions(agents=n, rtf=1.0, duration_s=seconds,
                                                **ground))
        with tempfile.TemporaryDirectory() as folder:
            subscriber = None
            if subscribe:
                subscriber = subprocess.Popen(subscriber_command(subscribe, n),
                                              env=child_environment(), stdout=subprocess.PIPE,
                                              stdin=subprocess.DEVNULL, text=True)
            rig = Rig(nodes, folder)
            sub_cpu = rig.wait_for_sim(120 + 3 * seconds, subscriber)
            logs = rig.stop()
            taken = '?'
            if subscriber is not None:
                subscriber.send_signal(signal.SIGINT)
                out, _ = subscriber.communicate(timeout=30)
                taken = out.split()[-1] if out.strip() else '?'
        summary, latency = sim_summary(logs[0])
        gaps = sum(text.count('gap in the truth stream') for text in logs[1:])
        if summary is None:
            print(f'| {n} | no summary | | | | | | |')
            continue
        sim_s, wall_s, rtf = summary
        lat = ' / '.join(f'{x:.2f}' for x in latency) if latency else '-'
        extra = f' {sub_cpu / wall_s:.0%}, {taken} |' if subscriber is not None else ''
        print(f'| {n} | {rtf:.3f} | {lat} | {rig.cpu_s[0] / wall_s:.0%} | '
              f'{sum(rig.cpu_s) / wall_s:.0%} | {rig.peak_rss_mb[0]:.0f} | '
              f'{sum(rig.peak_rss_mb[1:]) / max(sum(len(p.nodes) or 1 for p in nodes[1:]), 1):.0f}'
              f' | {gaps} |{extra}')


def bench_startup():
    import rclpy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, NavSatFix

    print('\n## Start-up to the first message (one Polaris rig, rtf 1)')
    print('| numba cache | /clock [s] | oxts/imu [s] | imu/data_raw [s] | gnss_receiver/fix [s] |')
    print('|---|---|---|---|---|')
    rclpy.init()
    topics = {'/clock': Clock, '/oxts/imu': Imu, '/imu/data_raw': Imu,
              '/gnss_receiver/fix': NavSatFix}
    first = {}
    node = None
    try:
        for label in ('cold (empty)', 'warm'):
            # a new probe per run: nothing of the run before is still queued in it
            node = rclpy.create_node('bench_startup_probe')
            for topic, kind in topics.items():
                node.create_subscription(kind, topic, lambda _m, t=topic: first.setdefault(
                    t, time.monotonic()), 10, raw=True)
            with tempfile.TemporaryDirectory() as folder, \
                    tempfile.TemporaryDirectory() as cache:
                env = child_environment()
                if label.startswith('cold'):
                    env['NUMBA_CACHE_DIR'] = cache
                first.clear()
                started = time.monotonic()
                rig = Rig(rig_processes('polaris', RigOptions(rtf=1.0, duration_s=30.0)), folder,
                          env)
                while len(first) < len(topics) and time.monotonic() - started < 600:
                    rclpy.spin_once(node, timeout_sec=0.05)
                rig.stop()
            node.destroy_node()
            node = None
            cells = [f'{first[t] - started:.1f}' if t in first else '-' for t in topics]
            print(f'| {label} | ' + ' | '.join(cells) + ' |')
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--what', default='rtf,agents,startup',
                        help='comma-separated: rtf, agents, startup (default all)')
    parser.add_argument('--seconds', type=float, default=60.0,
                        help='simulated seconds of the rtf run (default %(default)s)')
    parser.add_argument('--agents', default='1,2,4,6,8,10',
                        help='agent counts of the agents run (default %(default)s)')
    parser.add_argument('--agent-seconds', type=float, default=20.0,
                        help='simulated seconds per agent count (default %(default)s)')
    parser.add_argument('--terrain', default='flat',
                        help='the rig\'s terrain for rtf and agents (default flat)')
    parser.add_argument('--vibration', action='store_true',
                        help='engine vibration and the parked jitter on (rtf and agents)')
    parser.add_argument('--subscribe', default='',
                        help='agents: comma-separated topics a subscriber process takes of every '
                             'vehicle (e.g. vehicle/odom,imu/data_raw,gnss_receiver/fix)')
    parser.add_argument('--sensor-processes', choices=SENSOR_PROCESSES,
                        default=SENSOR_PROCESSES[0],
                        help='the sensor nodes in one process (default), one per vehicle, or '
                             'one per node (rtf and agents)')
    args = parser.parse_args()
    what = set(args.what.split(','))
    ground = ground_options(args.terrain, args.vibration, args.sensor_processes)
    if 'rtf' in what:
        bench_rtf(args.seconds, ground)
    if 'agents' in what:
        topics = [t for t in args.subscribe.split(',') if t]
        known = subscribable() if topics else {}
        unknown = [t for t in topics if t not in known]
        if unknown:
            parser.error(f'--subscribe: {unknown[0]!r} is not one of {", ".join(known)}')
        subscribe = {t: known[t] for t in topics}
        bench_agents([int(n) for n in args.agents.split(',')], args.agent_seconds, ground,
                     subscribe)
    if 'startup' in what:
        bench_startup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
