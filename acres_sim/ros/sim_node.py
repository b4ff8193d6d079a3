"""The sim node: the physics of every vehicle of the rig in one fixed-step
loop, publishing ``/clock``, each vehicle's INS topics and TF, and the
physics-rate truth its GNSS and IMU nodes run on.

One loop, no timers: each pass runs the next physics steps of every vehicle
in the block kernel (:class:`acres_sim.core.block.RigSimulation`, the
recorder's own models), then publishes what those steps gave, step by step,
as CDR bytes from the recorder's encoders (:mod:`acres_sim.record.batches`)
-- the bag of ``acres-sim record`` and this node carry the same bytes.
Per step k (t = k / 120): ``/clock``; per vehicle its truth on ``sim/truth``;
at an INS epoch the INS topics of the vehicle (spec's topic table) and TF
utm -> base_footprint.  At the start: static TF of the mounts and utm -> map.

Pacing: ``rtf`` > 0 holds step k to the wall time k / (120 rtf) after the
start (late steps run at once, a few at a time, to catch up); ``rtf`` = 0 runs
as fast as the sensor nodes keep up: they report their progress on
``sim/sensor_progress`` and the sim keeps at most :data:`AHEAD_STEPS` steps
ahead of the slowest (a node that stops reporting and leaves the graph is
no longer waited for).  Before step 0 the sim waits (``start_timeout_s``) for
every vehicle's sensor nodes to subscribe, so they see the whole run.

``cmd_vel`` (Twist or TwistStamped, ``cmd_vel.type``) overrides the route
follower of its vehicle: non-finite commands are refused, others clamped to
the vehicle's limits (throttled warnings); a command older than
``cmd_vel.timeout_s`` of sim time stops the vehicle.
"""

import math
import sys
import time

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix
from std_msgs.msg import Header

from acres_sim.config import ConfigError, load_config
from acres_sim.config.node_params import AGENT_PARAMS, SIM_PARAMS
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.block import RigSimulation
from acres_sim.core.command import check_command
from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.ins import InsModel
from acres_sim.core.physics import Fleet
from acres_sim.core.routes import RouteFollower, load_route
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.record import messages as msg
from acres_sim.record.batches import MessageBatches
from acres_sim.rig import DEFAULT_ROUTES
from acres_sim.ros.params import declare_node_params, declare_sensor_keys, sensor_config
from acres_sim.ros.qos import OUTPUT_QOS, TRUTH_DEPTH, TRUTH_QOS
from acres_sim.ros.sensor_node import PROGRESS_TOPIC, step_from_stamp
from acres_sim.ros.tf import TfPublishers
from acres_sim.topics import (INS_FRAME, INS_TOPICS, OXTS_IMU_FRAME, TRUTH_TOPIC, lever_arm,
                              mount_transforms, utm_to_map)

__all__ = ['SimNode', 'main']

FOREVER_S = 2 * 365 * 86400.0   # duration_s 0: two years of steps (the INS year table's reach)
AHEAD_STEPS = TRUTH_DEPTH // 2  # at rtf 0: how far the sim may run ahead of a sensor node
CATCH_UP_STEPS = 12             # at most this many late steps per pass
FAST_BLOCK_STEPS = 12           # steps per pass at rtf 0
STALL_CHECK_S = 0.5             # waiting this long, look whether the node is still there
LOG_THROTTLE_S = 5.0


class _Agent:
    """One vehicle: its simulation, publishers and command."""

    def __init__(self, node, name, own, config):
        self.name = name
        self.vehicle_name = own['vehicle']
        self.vehicle = load_vehicle(self.vehicle_name)
        self.config = config
        self.ns = own['namespace']
        self.prefix = own['frame_prefix']
        self.topics = INS_TOPICS[self.vehicle_name]
        route = load_route(own['route'] or DEFAULT_ROUTES[self.vehicle_name])
        self.site = SiteGeoreference.from_config(config)
        fleet = Fleet([self.vehicle], [route.start_pose()])
        ins = (InsModel.from_config(config, lever_arm(config, 'ins.position_flu_m', self.vehicle),
                                    agent_index=config['agent.index'], site=self.site)
               if config['ins.enabled'] else None)
        rates = {'imu': config['imu.hz'], 'ins': config['ins.hz'], 'gnss': config['gnss.hz'],
                 'truth': config['ins.hz']}
        steps = int(round((node.duration_s or FOREVER_S) * PHYSICS_HZ))
        self.sim = RigSimulation(fleet, [RouteFollower(route, self.vehicle)], [None], [ins],
                                 [None], np.zeros(3), rates, steps, self.site)
        self.ins = ins
        self.batches = MessageBatches(msg.imu_variances(config), msg.ins_variances(config),
                                      ins.pose_variance if ins else [0.0] * 6,
                                      ins.position_variance if ins else [0.0] * 3)
        self.sensors_expected = int(config['gnss.enabled']) + int(config['imu.enabled'])
        self.truth_pub = node.create_publisher(Odometry, self.topic(TRUTH_TOPIC), TRUTH_QOS)
        self.pubs = {}
        if ins is not None:
            t = self.topics
            kinds = [('odom', Odometry), ('fix', NavSatFix), ('imu', Imu), ('truth', Odometry)]
            if t.velocity:
                kinds.append(('velocity', TwistStamped))
            for kind, msg_type in kinds:
                self.pubs[kind] = node.create_publisher(msg_type, self.topic(getattr(t, kind)),
                                                        OUTPUT_QOS)
        self.command = None           # (speed, yaw rate, step received)
        msg_type = TwistStamped if node.cmd_vel_type == 'twist_stamped' else Twist
        node.create_subscription(msg_type, self.topic('cmd_vel'),
                                 lambda m: node.on_cmd_vel(self, m), OUTPUT_QOS)

    def topic(self, name):
        return f'/{self.ns}/{name}' if self.ns else f'/{name}'


class SimNode(Node):
    executable = 'sim_node'

    def __init__(self):
        super().__init__('sim_node')
        own = declare_node_params(self, SIM_PARAMS)
        self.rtf = own['rtf']
        self.duration_s = own['duration_s']
        self.start_timeout_s = own['start_timeout_s']
        self.start_subscribers = own['start_subscribers']
        self.publish_tf = own['publish_tf']
        self.cmd_vel_type = own['cmd_vel.type']
        self.cmd_vel_timeout_steps = own['cmd_vel.timeout_s'] * PHYSICS_HZ
        names = self.declare_parameter('agents.names', ['agent0']).value
        names = list(names)
        if not names or len(set(names)) != len(names):
            raise ConfigError(f'agents.names = {names!r}: allowed a list of distinct names')
        self.agents = []
        for name in names:
            prefix = f'agents.{name}.'
            agent_own = declare_node_params(self, AGENT_PARAMS, prefix)
            defaults = load_config(rig=agent_own['vehicle'])
            values = declare_sensor_keys(self, defaults, prefix)
            config = sensor_config(self, values, prefix)
            self.agents.append(_Agent(self, name, agent_own, config))
        self.clock_pub = self.create_publisher(Clock, '/clock', OUTPUT_QOS)
        self.tf = TfPublishers(self)
        self.progress = {}            # sensor node name -> (last step, wall time heard)
        for agent in self.agents:
            self.create_subscription(Header, agent.topic(PROGRESS_TOPIC), self._on_progress,
                                     OUTPUT_QOS)
        self.last_steps = int(round(self.duration_s * PHYSICS_HZ)) if self.duration_s else None
        self.step = 0
        self.stats = {'steps': 0, 'waits': 0}

    # -- callbacks ------------------------------------------------------------

    def on_cmd_vel(self, agent, m):
        twist = m.twist if isinstance(m, TwistStamped) else m
        checked = check_command(float(twist.linear.x), float(twist.angular.z), agent.vehicle)
        if checked.problem:
            self.get_logger().warning(f'{agent.topic("cmd_vel")}: {checked.problem}',
                                      throttle_duration_sec=LOG_THROTTLE_S)
        if checked.refused:
            return
        agent.command = (checked.speed_mps, checked.yaw_rate_radps, self.step)

    def _on_progress(self, m):
        self.progress[m.frame_id] = (step_from_stamp(m.stamp.sec, m.stamp.nanosec),
                                     time.monotonic())

    # -- the loop -------------------------------------------------------------

    def publish_static_tf(self):
        static = [t for agent in self.agents
                  for t in mount_transforms(agent.config, agent.vehicle, agent.vehicle_name,
                                            agent.prefix)]
        static.append(utm_to_map(self.agents[0].config, self.agents[0].site))
        data = msg.TYPESTORE.serialize_cdr(msg.tf_message(
            [msg.transform_stamped(0, *transform) for transform in static]),
            'tf2_msgs/msg/TFMessage')
        self.tf.publish_static(bytes(data))

    def wait_for_sensors(self, executor):
        """Spin until every vehicle's sensor nodes subscribe to its truth (or the timeout)."""
        if self.start_timeout_s <= 0:
            return
        deadline = time.monotonic() + self.start_timeout_s
        missing = self._missing_sensors()
        while missing and time.monotonic() < deadline and rclpy.ok():
            executor.spin_once(timeout_sec=0.05)
            missing = self._missing_sensors()
        if missing:
            self.get_logger().warning(
                f'starting without all sensor nodes after {self.start_timeout_s:g} s: '
                + ', '.join(f'{topic} has {n} of {want} subscribers'
                            for topic, n, want in missing))

    def _missing_sensors(self):
        missing = [(a.topic(TRUTH_TOPIC), a.truth_pub.get_subscription_count(),
                    a.sensors_expected) for a in self.agents
                   if a.truth_pub.get_subscription_count() < a.sensors_expected]
        if self.start_subscribers:
            outputs = [self.clock_pub, *(p for a in self.agents for p in a.pubs.values())]
            if self.publish_tf and self.tf.dynamic is not None:
                outputs.append(self.tf.dynamic)
            missing += [(p.topic_name, p.get_subscription_count(), self.start_subscribers)
                        for p in outputs if p.get_subscription_count() < self.start_subscribers]
        return missing

    def run(self, executor):
        self.publish_static_tf()
        self.wait_for_sensors(executor)
        wall0 = time.monotonic()
        while rclpy.ok():
            if self.last_steps is not None and self.step > self.last_steps:
                break
            if self.rtf > 0.0:
                n = self._pace(executor, wall0)
            else:
                executor.spin_once(timeout_sec=0.0)
                self._hold_for_sensors(executor)
                n = FAST_BLOCK_STEPS
            if self.last_steps is not None:
                n = min(n, self.last_steps + 1 - self.step)
            self._advance(n)

    def _pace(self, executor, wall0):
        """Wait for the wall time of the next step; the number of steps due now."""
        while rclpy.ok():
            lag = time.monotonic() - wall0 - self.step / (PHYSICS_HZ * self.rtf)
            if lag >= 0.0:
                executor.spin_once(timeout_sec=0.0)
                return int(min(CATCH_UP_STEPS, 1 + math.floor(lag * PHYSICS_HZ * self.rtf)))
            executor.spin_once(timeout_sec=-lag)
        return 1

    def _hold_for_sensors(self, executor):
        """At rtf 0: wait while a sensor node that reports is AHEAD_STEPS behind."""
        waited_since = time.monotonic()
        while rclpy.ok():
            behind = [name for name, (k, _heard) in self.progress.items()
                      if k < self.step - AHEAD_STEPS]
            if not behind:
                return
            self.stats['waits'] += 1
            executor.spin_once(timeout_sec=0.01)
            if time.monotonic() - waited_since > STALL_CHECK_S:
                present = self._sensor_nodes_present()
                for name in behind:
                    if name not in present:
                        self.get_logger().warning(f'{name} left: not waiting for it any more')
                        del self.progress[name]
                waited_since = time.monotonic()

    def _sensor_nodes_present(self):
        names = set()
        for agent in self.agents:
            for info in self.get_subscriptions_info_by_topic(agent.topic(TRUTH_TOPIC)):
                ns = info.node_namespace.rstrip('/')
                names.add(f'{ns}/{info.node_name}')
        return names

    def _commands(self):
        for i, agent in enumerate(self.agents):
            command = agent.sim.commands[0]
            if agent.command is None:
                command[:] = 0.0
                continue
            speed, yaw_rate, k = agent.command
            if self.step - k > self.cmd_vel_timeout_steps:
                if command[1] != 0.0 or command[2] != 0.0:
                    self.get_logger().warning(
                        f'{agent.topic("cmd_vel")}: no command for more than '
                        f'{self.cmd_vel_timeout_steps / PHYSICS_HZ:g} s; stopping',
                        throttle_duration_sec=LOG_THROTTLE_S)
                speed = yaw_rate = 0.0
            command[:] = (1.0, speed, yaw_rate)

    def _advance(self, n):
        """Run the next ``n`` steps of every vehicle and publish them in order."""
        k0 = self.step
        self._commands()
        blocks = [agent.sim.advance(n)[0] for agent in self.agents]
        k1 = k0 + blocks[0].states.shape[0]
        steps = np.arange(k0, k1)
        t_ns = msg.ns_from_steps(steps, PHYSICS_HZ)
        clock = self.agents[0].batches.clock(t_ns).messages()
        per_agent = [self._encode(agent, b, t_ns) for agent, b in zip(self.agents, blocks)]
        for j in range(k1 - k0):
            self.clock_pub.publish(clock[j])
            for agent, (truth, ins_at) in zip(self.agents, per_agent):
                agent.truth_pub.publish(truth[j])
                for pub, data in ins_at.get(k0 + j, ()):
                    pub.publish(data)
        self.step = k1
        self.stats['steps'] += k1 - k0

    def _encode(self, agent, b, t_ns):
        """(truth messages per step, {step: [(publisher, bytes), ...]} of the INS)."""
        truth = agent.batches.physics_truth(b.states, t_ns, f'{agent.prefix}chassis').messages()
        ins_at = {}
        if agent.ins is None or not len(b.ins_k):
            return truth, ins_at
        t, batches, results = agent.topics, agent.batches, b.ins
        ins_ns = msg.ns_from_steps(b.ins_k, PHYSICS_HZ)
        base = f'{agent.prefix}base_footprint'
        imu_frame = OXTS_IMU_FRAME if t.oxts_axes else INS_FRAME
        out = [(agent.pubs['odom'], batches.utm_odometry(results, ins_ns, 'utm', base))]
        if self.publish_tf and self.tf.dynamic is not None:
            out.append((self.tf.dynamic, batches.odometry_tf(results, ins_ns, 'utm', base)))
        out.append((agent.pubs['fix'], batches.ins_fix(results, ins_ns,
                                                       agent.prefix + t.fix_frame)))
        out.append((agent.pubs['imu'], batches.ins_imu(results, ins_ns, agent.prefix + imu_frame,
                                                       oxts_axes=t.oxts_axes)))
        if t.velocity:
            out.append((agent.pubs['velocity'], batches.ins_velocity(
                results, ins_ns, agent.prefix + INS_FRAME)))
        out.append((agent.pubs['truth'], batches.ground_truth_odometry(results, ins_ns, 'utm',
                                                                       base)))
        split = [(pub, encoded.messages()) for pub, encoded in out]
        for i, k in enumerate(b.ins_k.tolist()):
            ins_at[k] = [(pub, messages[i]) for pub, messages in split]
        return truth, ins_at


def main(args=None):
    rclpy.init(args=args)
    node = None
    try:
        node = SimNode()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        node.run(executor)
    except ConfigError as err:
        print(f'sim_node: {err}', file=sys.stderr)
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
