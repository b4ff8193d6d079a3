"""One vehicle built from its resolved configuration, the same way for the
headless recorder and for the live nodes.

:func:`build_vehicle` gives a :class:`Vehicle`: its physics parameters, route
follower and start pose, the sensor models it carries (GNSS receiver, IMU,
INS; None for one that is off or not simulated in this process), their lever
arms, rates and delay, its topic set, frame prefix and namespace, and the
encoders of its messages with one channel per sensor
(:mod:`acres_sim.pipeline.channels`).  Each vehicle is built on its own --
its own vehicle model, configuration, route, agent index, prefix and
namespace -- so a fleet is a list of them.  :func:`rig_simulation` runs a
list of them in the block kernel; :func:`static_tf` is their mounts for
``/tf_static``.

The recorder builds every sensor of every vehicle in one process; the live
rig splits a vehicle over processes, each building it with only the sensors
it simulates (``sensors``): the sim node the INS, the GNSS and IMU nodes
their own.  The models are seeded per agent index, not per process, so the
pieces give the numbers of the whole.
"""

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from acres_sim.config.routes import DEFAULT_ROUTES, load_route
from acres_sim.config.scene import default_scene
from acres_sim.config.sensor_records import vibration_switches
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.block import RigSimulation
from acres_sim.core.events import VehicleEvents, no_events
from acres_sim.core.physics import Fleet
from acres_sim.core.routes import RouteFollower
from acres_sim.core.vehicles import VehicleParams
from acres_sim.core.vibration import VibrationSwitches
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.batches import MessageBatches
from acres_sim.pipeline.channels import GnssChannel, GnssHeadingChannel, ImuChannel, InsChannel
from acres_sim.pipeline.models import (barometer, gnss_heading, gnss_receiver, imu_model,
                                       ins_model, magnetometer, radar, site_georeference,
                                       wheel_odometry)
from acres_sim.pipeline.step_channels import STEP_SENSORS
from acres_sim.pipeline.timeline import Timeline
from acres_sim.pipeline.topics import INS_TOPICS, InsTopics, lever_arm, mount_transforms, utm_to_map

__all__ = ['SENSORS', 'SIM_SENSORS', 'Vehicle', 'build_vehicle', 'rig_simulation', 'static_tf',
           'vehicle_route']

SENSORS = ('gnss', 'imu', 'ins', *STEP_SENSORS)
#: what the sim process simulates: the INS and the sensors sampled from the state
SIM_SENSORS = ('ins', *STEP_SENSORS)

# The sensor key -> configuration key of its mount.
_MOUNT_KEYS = {'gnss': 'gnss.antenna_flu_m', 'imu': 'imu.position_flu_m',
               'ins': 'ins.position_flu_m'}


@dataclass
class Vehicle:
    """One vehicle of a run: what both drivers need to simulate it and to
    write or publish its output."""

    name: str                     # the vehicle model and topic set: 'polaris', 'maxxum'
    params: VehicleParams         # its physics
    config: Any                   # its resolved acres_sim.config.Config
    agent_index: int              # seeds its models' noise streams
    frame_prefix: str             # of its frames, e.g. 'agent1/' ('' none)
    namespace: str                # of its topics, e.g. 'agent1' ('' none)
    site: Any                     # the SiteGeoreference its INS and receiver work in
    timeline: Timeline            # the ROS times of the steps (from the site's start_utc)
    topics: InsTopics             # its INS topic set
    route: Any                    # the Route its follower drives (None: not driven here)
    follower: Optional[RouteFollower]
    start_pose: Optional[tuple]   # (x, y, yaw) at the start, grid ENU
    parked: bool                  # no route follower drives it (a standing command)
    rates: dict                   # Due rates [Hz] of 'imu', 'ins', 'gnss' and 'truth'
    delay_s: float                # the sensors' latency
    arms: dict                    # sensor -> lever arm from the chassis origin [m]
    gnss: Any                     # the models (None: off, or not simulated here)
    imu: Any
    ins: Any
    step_sensors: dict            # name -> the models sampled from the state (those built)
    batches: MessageBatches       # its block encoders
    vibration: VibrationSwitches  # its vibration sources (the config's vibration.* keys)
    events: VehicleEvents         # its fault events (their clock is this process's own)
    gnss_heading: Any = None      # the receiver's dual-antenna heading (None: off or no receiver)
    channels: dict = field(default_factory=dict)   # sensor -> its channel (built sensors)

    def set_events(self, events: VehicleEvents):
        """Its events now ``events`` (an event injected or cleared at runtime):
        the events it had come first, in order, and keep their clocks' state;
        its models and channels take the new faults."""
        old = self.events
        if events.names[:len(old)] != old.names:
            raise ValueError(f'the new events {events.names} do not begin with the old '
                             f'{old.names}')
        events.state[:len(old)] = old.state
        self.events = events
        for model in (self.gnss, self.imu):
            if model is not None:
                model.effects = events.effects
        for channel in self.channels.values():
            channel.faults.events = events

    def topic(self, name):
        """The full name of one of its topics (a global one, '/...', as it is)."""
        if name.startswith('/'):
            return name
        return f'/{self.namespace}/{name}' if self.namespace else f'/{name}'

    def relative_topic(self, name):
        """The name the live nodes use: relative, in the vehicle's namespace below
        the node's own (which launch may push), so that the whole rig moves with
        it; a global one ('/...') as it is.  :meth:`topic` is this name in a rig
        at the root, as the recorder's bag has it."""
        if name.startswith('/'):
            return name
        ns = self.namespace.strip('/')
        return f'{ns}/{name}' if ns else name


def vehicle_route(vehicle_name, route=None):
    """The route a vehicle drives: ``route`` (a packaged name or a route file),
    or, when that is empty, the default route of its vehicle model."""
    return load_route(route or DEFAULT_ROUTES[vehicle_name])


def build_vehicle(config, vehicle_name, *, route=None, motion=None, scene=None, site=None,
                  agent_index=None, frame_prefix='', namespace='', sensors=SENSORS,
                  events=None) -> Vehicle:
    """The vehicle ``vehicle_name`` (a packaged vehicle model) with the resolved
    ``config``.

    ``route``: the Route it drives from its start (see :func:`vehicle_route`),
    or ``motion``: its spawn, follower and parking of a scenario
    (:func:`acres_sim.config.scenario.vehicle_motion`); neither builds no
    route follower (a sensor node's vehicle, driven elsewhere).  ``scene``:
    the obstacles its GNSS receiver sees (None: the packaged farmstead).
    ``site``: the shared georeference (None: the config's).  ``agent_index``:
    its noise streams (None: the config's ``agent.index``).  ``sensors``: the
    models to build, of :data:`SENSORS`; each only if it is enabled.
    ``events``: its fault events (a core.events.VehicleEvents, e.g.
    ``EventPlan.for_vehicle``; None: none), whose faults its models take."""
    unknown = set(sensors) - set(SENSORS)
    if unknown:
        raise ValueError(f'unknown sensors {sorted(unknown)}; known: {", ".join(SENSORS)}')
    params = load_vehicle(vehicle_name)
    site = site if site is not None else site_georeference(config)
    index = config['agent.index'] if agent_index is None else int(agent_index)
    arms = {sensor: lever_arm(config, key, params) for sensor, key in _MOUNT_KEYS.items()}
    built = {sensor for sensor in sensors if config[f'{sensor}.enabled']}
    gnss = (gnss_receiver(config, scene if scene is not None else default_scene(), site, index)
            if 'gnss' in built else None)
    imu = imu_model(config, arms['imu'], index) if 'imu' in built else None
    ins = ins_model(config, arms['ins'], index, site) if 'ins' in built else None
    # the barometer and magnetometer sit in the INS unit
    makers = {'baro': lambda: barometer(config, arms['ins'], index),
              'mag': lambda: magnetometer(config, arms['ins'], index, site),
              'wheel_odometry': lambda: wheel_odometry(config, params, index),
              'radar': lambda: radar(config, params, index)}
    step_sensors = {name: makers[name]() for name in STEP_SENSORS if name in built}
    events = no_events() if events is None else events
    for model in (gnss, imu):
        if model is not None:
            model.effects = events.effects
    if motion is not None:
        route, follower, start_pose, parked = (motion.follower.route, motion.follower,
                                               tuple(motion.spawn), motion.parked)
    else:
        follower = RouteFollower(route, params) if route is not None else None
        start_pose = route.start_pose() if route is not None else None
        parked = False
    rates = {sensor: config[f'{sensor}.hz'] for sensor in ('imu', 'ins', 'gnss')}
    rates['truth'] = config['ins.hz']     # truth.jsonl at the INS rate, INS on or off
    batches = MessageBatches(msg.imu_variances(config), msg.ins_variances(config),
                             ins.pose_variance if ins else [0.0] * 6,
                             ins.position_variance if ins else [0.0] * 3)
    vehicle = Vehicle(
        name=vehicle_name, params=params, config=config, agent_index=index,
        frame_prefix=frame_prefix, namespace=namespace, site=site,
        timeline=Timeline.starting_at(site.start_utc),
        topics=INS_TOPICS[vehicle_name], route=route,
        follower=follower, start_pose=start_pose, parked=parked,
        rates=rates, delay_s=config['delay_s'], arms=arms, gnss=gnss, imu=imu, ins=ins,
        step_sensors=step_sensors, batches=batches, vibration=vibration_switches(config),
        events=events,
        gnss_heading=(gnss_heading(config, index)
                      if gnss is not None and config['gnss.heading.enabled'] else None))
    channel_types = {'gnss': GnssChannel, 'gnss_heading': GnssHeadingChannel,
                     'imu': ImuChannel, 'ins': InsChannel}
    vehicle.channels = {name: make(vehicle) for name, make in channel_types.items()
                        if getattr(vehicle, name) is not None}
    vehicle.channels.update({name: STEP_SENSORS[name](vehicle, model)
                             for name, model in step_sensors.items()})
    return vehicle


def rig_simulation(vehicles, steps, ground=None):
    """The block kernel's simulation of ``vehicles`` (each with a route) for
    ``steps`` physics steps, on the terrain ``ground`` (a TerrainField; None:
    the flat plane).  The kernel takes one set of rates and one antenna lever
    arm for all: the vehicles must agree on them."""
    first = vehicles[0]
    for vehicle in vehicles[1:]:
        if vehicle.rates != first.rates or not np.array_equal(vehicle.arms['gnss'],
                                                                first.arms['gnss']):
            raise ValueError('the vehicles of one simulation differ in their sensor rates or '
                             'antenna lever arm, which the block kernel takes once for all')
    fleet = Fleet([v.params for v in vehicles], [v.start_pose for v in vehicles], ground=ground,
                  switches=[v.vibration for v in vehicles])
    sim = RigSimulation(fleet, [v.follower for v in vehicles], [v.imu for v in vehicles],
                        [v.ins for v in vehicles], [v.gnss for v in vehicles],
                        first.arms['gnss'], first.rates, steps, first.site,
                        events=[v.events for v in vehicles])
    for k, vehicle in enumerate(vehicles):
        sim.commands[k, 0] = float(vehicle.parked)     # parked: a standing (zero) command
    return sim


def static_tf(vehicles):
    """``/tf_static`` of a rig (a TFMessage): every vehicle's mounts from its
    base_footprint, then utm -> map (so rviz can work in small numbers),
    stamped with the start of the run."""
    transforms = [t for v in vehicles
                  for t in mount_transforms(v.config, v.params, v.name, v.frame_prefix)]
    transforms.append(utm_to_map(vehicles[0].config, vehicles[0].site))
    t0_ns = vehicles[0].timeline.t0_ns
    return msg.tf_message([msg.transform_stamped(t0_ns, *t) for t in transforms])
