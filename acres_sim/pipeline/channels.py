"""One channel per sensor of a vehicle: its samples pass the delay line (the
spec's Emit and Drain, :class:`acres_sim.core.schedule.DelayLine`, by
physics step) and leave it as :class:`Delivery` items -- the file row with
its times, and the sensor's messages encoded as CDR bytes, stamped with the
ROS time of the sample (:mod:`acres_sim.pipeline.timeline`).  The recorder
writes the row and puts the bytes into its bag at the delivery time; a live
node publishes the bytes at the delivery step.

* :class:`GnssChannel`: the receiver's rows, each ending with the true
  antenna at its sample time (a freeze keeps it fresh, as the INS truth);
  ``gnss_receiver/fix`` (NavSatFix in the antenna frame),
  ``gnss_receiver/nmea`` (the GGA sentence, when the row has one, followed by
  the GST sentence with ``gnss.nmea.gst``), ``gnss_receiver/gpsfix``
  (gps_msgs/GPSFix, with ``gnss.gpsfix``) and the receiver's status on
  ``/diagnostics``, encoded from the row it delivers (never from its truth):
  a block of epochs when they enter the line (:meth:`GnssChannel.push_epochs`,
  the recorder) or one row as it leaves (a live node's
  :meth:`GnssChannel.push_row`), the same bytes either way.
* :class:`GnssHeadingChannel` (with ``gnss.heading.enabled``): the
  dual-antenna heading's rows (``gnss_heading.jsonl``) and
  ``gnss_receiver/heading`` (sensor_msgs/Imu with the orientation only, in the
  antenna frame; nothing in an epoch without a heading), delivered at
  t_sample + delay_s like the receiver's rows, encoded as the receiver's; the
  GNSS receiver's dropout and freeze events apply to it too.
* :class:`ImuChannel`: ``imu/data_raw``, encoded when the sample enters the
  line -- a block of samples at once (:meth:`ImuChannel.push_block`) or one
  (:meth:`ImuChannel.push_row`), the same bytes either way.
* :class:`InsChannel`: the INS topics of a block of epochs, sent at their
  sample time without latency as the OxTS stream does
  (:meth:`InsChannel.encode_epochs`); no driver pushes rows into its delay
  line (the INS file rows take the row writer's own line, the recorder's
  report values a :class:`~acres_sim.core.schedule.BlockDelayLine`).

Topic names are relative to the vehicle's namespace (``Vehicle.topic``),
except the global ones (``/diagnostics``, ``/tf``).  A channel whose
``encoding`` is off (a recording without a bag) encodes no message: its
deliveries carry the same rows and none.
"""

import struct
from typing import Any, NamedTuple, Optional

import numpy as np

from acres_sim.core.events import SENSOR_GNSS, SENSOR_IMU, SENSOR_INS
from acres_sim.core.gnss.receiver import TRUTH_KEYS
from acres_sim.core.ins_row import P_N
from acres_sim.core.rounding import round_decimals
from acres_sim.core.schedule import DelayLine
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.cdr import diagnostic_array
from acres_sim.pipeline.faults import OutputFaults
from acres_sim.pipeline.rows import imu_row, timed_row
from acres_sim.pipeline.topics import (ANTENNA_FRAME, BASE_FRAME, GNSS_TOPICS, IMU_FRAME,
                                       IMU_TOPIC, UTM_FRAME)

__all__ = ['DIAGNOSTICS_TOPIC', 'Delivery', 'GnssChannel', 'GnssHeadingChannel', 'ImuChannel',
           'InsChannel', 'OneImuMessage', 'TF_TOPIC', 'imu_values']

DIAGNOSTICS_TOPIC = '/diagnostics'
TF_TOPIC = '/tf'
GPS_FIX_TYPE = 'gps_msgs/msg/GPSFix'


class Delivery(NamedTuple):
    """One sample leaving a channel."""

    k_sample: int
    k_delivery: Optional[int]    # None: the run ended before it was due (flush)
    row: dict                    # the file row: the sample's row with its three times
    messages: list               # (topic, CDR bytes) in publishing order (none from flush)
    extra: Any                   # what the driver pushed along with the sample


class _Channel:
    """A delay line of timed rows; subclasses encode the messages.  Samples
    pass the sensor's dropout and freeze events first (``faults``,
    :mod:`acres_sim.pipeline.faults`)."""

    #: (topic, message type) of every topic the channel sends, in order (the
    #: recorder adds them to its bag, the nodes create their publishers)
    topic_types = ()
    sensor = 0           # events.SENSOR_* of the channel's sensor
    output_columns = None
    truth_keys = ()      # the keys of a row that a freeze keeps fresh

    def __init__(self, vehicle):
        self.delay_s = vehicle.delay_s
        self.line = DelayLine(vehicle.delay_s, PHYSICS_HZ)
        self.timeline = vehicle.timeline      # the ROS times of the steps
        self.batches = vehicle.batches        # the block encoders
        self.faults = OutputFaults(vehicle.events, self.sensor, self.output_columns,
                                   self.truth_keys)
        self.encoding = True     # False: no message is encoded (the rows stay as they are)

    def push(self, k, row, messages=None, extra=None):
        """Emit: ``row`` sampled at step ``k`` enters the line, with its
        ``messages`` if they are encoded already (None: they are encoded from
        the timed row when it leaves; an empty list: it sends none), and
        ``extra``, given back with it."""
        self.line.push(k, (row, messages, extra))

    def push_many(self, steps, rows, messages=None):
        """A block of samples: ``rows[i]`` sampled at ``steps[i]``, with its
        ``messages[i]`` (None: encoded when they leave), as :meth:`push` takes them."""
        messages = [None] * len(rows) if messages is None else messages
        self.line.push_many(steps, [(row, m, None) for row, m in zip(rows, messages)])

    def push_rows(self, steps, rows, views=None, extras=None):
        """A block of rows sampled at ``steps`` (in order): each passes the
        output faults (``views``: the events' views at each, None: no event),
        and those left enter the line with their messages encoded together
        (:meth:`encode_rows`; none while ``encoding`` is off) and ``extras[i]``."""
        extras = [None] * len(rows) if extras is None else extras
        kept = []
        for i, (k, row, extra) in enumerate(zip(steps, rows, extras)):
            row = self.faults.row(row, None if views is None else views[i])
            if row is not None:
                kept.append((k, row, extra))
        if not kept:
            return
        steps, rows, extras = zip(*kept)
        messages = self.encode_rows(rows, steps) if self.encoding else [None] * len(rows)
        self.line.push_many(steps, list(zip(rows, messages, extras)))

    def push_row(self, k, row, view=None):
        """One sample's row, as a live node takes them one at a time (``view``:
        the events' views at it, None: no event)."""
        row = self.faults.row(row, view)
        if row is not None:
            self.push(k, row)

    def drain(self, k):
        """Drain: every sample delivered at step ``k`` or before (oldest first)."""
        out = []
        for release in self.line.drain(k):
            row, messages, extra = release.item
            k_sample, k_delivery = release.sample_step, release.delivery_step
            timed = timed_row(row, k_sample, k_delivery / PHYSICS_HZ, self.delay_s)
            if messages is None:
                messages = self.encode(timed, k_sample) if self.encoding else []
            out.append(Delivery(k_sample, k_delivery, timed, messages, extra))
        return out

    def flush(self):
        """End of run: every sample still waiting, with delivery null and no messages."""
        return [Delivery(r.sample_step, None, timed_row(r.item[0], r.sample_step, None,
                                                        self.delay_s), [], r.item[2])
                for r in self.line.flush()]

    def reset(self):
        """Drop every waiting sample (the sensor starts again)."""
        self.line.reset()
        self.faults.reset()

    def encode(self, row, k_sample):
        """The messages of a delivered row (none by default)."""
        return []

    def encode_rows(self, rows, steps):
        """The messages of each row sampled at ``steps`` (:meth:`encode` of each
        by default; a channel may encode them together, the same bytes)."""
        return [self.encode(row, k) for row, k in zip(rows, steps)]


class GnssChannel(_Channel):
    """The receiver's rows and its topics (see the module docstring)."""

    sensor = SENSOR_GNSS
    truth_keys = TRUTH_KEYS

    def __init__(self, vehicle):
        super().__init__(vehicle)
        self.frame = vehicle.frame_prefix + ANTENNA_FRAME
        self.status_name = f'{vehicle.frame_prefix}gnss_receiver'
        self.service = msg.navsat_service(vehicle.config)
        self.receiver = vehicle.gnss
        self.gst = vehicle.config['gnss.nmea.gst']
        self.gpsfix = vehicle.config['gnss.gpsfix']
        types = [(GNSS_TOPICS['fix'], 'sensor_msgs/msg/NavSatFix'),
                 (GNSS_TOPICS['nmea'], 'std_msgs/msg/String')]
        if self.gpsfix:
            types.append((GNSS_TOPICS['gpsfix'], GPS_FIX_TYPE))
        types.append((DIAGNOSTICS_TOPIC, 'diagnostic_msgs/msg/DiagnosticArray'))
        self.topic_types = tuple(types)

    def push_epochs(self, steps, antennas, records, views=None):
        """The block kernel's epochs: the rows of the receiver's ``records`` at
        ``steps``, each with its true antenna position as ``extra`` (``views``:
        the events' views at each, None: no event); their messages encoded
        together (:meth:`push_rows`)."""
        steps, antennas = np.asarray(steps).tolist(), np.asarray(antennas).tolist()
        rows = [self.receiver.row(k / PHYSICS_HZ, antenna, record)
                for k, antenna, record in zip(steps, antennas, records)]
        self.push_rows(steps, rows, views, extras=antennas)

    def encode(self, row, k_sample):
        """The messages of one row (a live node's epoch), as :meth:`encode_rows`
        gives them: the fix and GPSFix from the row builders (for one message
        cheaper than columns)."""
        stamp = self.timeline.ns(k_sample)
        serialise = msg.TYPESTORE.serialize_cdr
        fix = bytes(serialise(msg.navsat_fix_from_gnss_row(row, stamp, self.frame, self.service),
                              'sensor_msgs/msg/NavSatFix'))
        gps_fix = (bytes(serialise(msg.gps_fix_from_gnss_row(row, stamp, self.frame),
                                   GPS_FIX_TYPE)) if self.gpsfix else None)
        return self._sent(row, stamp, fix, gps_fix)

    def encode_rows(self, rows, steps):
        """The messages of each row sampled at ``steps``, in publishing order:
        the fix, the GGA and GST sentences (a row without a GGA has neither),
        the GPSFix, the status on /diagnostics; the fixes and GPSFixes of the
        rows encoded together (MessageBatches.gnss_fix, gps_fix)."""
        t_ns = self.timeline.ns_of_steps(steps)
        fixes = self.batches.gnss_fix(rows, t_ns, self.frame, self.service).messages()
        gps_fixes = (self.batches.gps_fix(rows, t_ns, self.frame).messages() if self.gpsfix
                     else [None] * len(rows))
        return [self._sent(row, stamp, fix, gps_fix)
                for row, stamp, fix, gps_fix in zip(rows, t_ns.tolist(), fixes, gps_fixes)]

    def _sent(self, row, stamp, fix, gps_fix):
        """The messages of a row around its encoded fix and GPSFix (None: none)."""
        serialise = msg.TYPESTORE.serialize_cdr
        sent = [(GNSS_TOPICS['fix'], fix)]
        sentence = msg.nmea_string(row)
        if sentence is not None:
            sent.append((GNSS_TOPICS['nmea'], bytes(serialise(sentence, 'std_msgs/msg/String'))))
            if self.gst:         # the GST of the epoch right after its GGA, as receivers send it
                sent.append((GNSS_TOPICS['nmea'],
                             bytes(serialise(msg.gst_string(row), 'std_msgs/msg/String'))))
        if gps_fix is not None:
            sent.append((GNSS_TOPICS['gpsfix'], gps_fix))
        sent.append((DIAGNOSTICS_TOPIC, diagnostic_array(
            stamp, '', [msg.gnss_status(row, self.status_name)])))
        return sent


class GnssHeadingChannel(_Channel):
    """The dual-antenna heading's rows and ``gnss_receiver/heading`` (see the
    module docstring).  Its epochs are the receiver's: the vehicle's attitude
    and the receiver's fix state at each (:meth:`push_epochs`, a block at a
    time, or :meth:`push_row` with a row of ``vehicle.gnss_heading``)."""

    topic_types = ((GNSS_TOPICS['heading'], 'sensor_msgs/msg/Imu'),)
    sensor = SENSOR_GNSS

    def __init__(self, vehicle):
        super().__init__(vehicle)
        self.frame = vehicle.frame_prefix + ANTENNA_FRAME
        self.model = vehicle.gnss_heading

    def push_epochs(self, steps, quats, fixes, views=None):
        """The heading of the receiver's epochs at ``steps``: the vehicle's
        quaternions ``quats`` (n, 4) and the fix state codes ``fixes`` (n,);
        their messages encoded together (:meth:`push_rows`)."""
        rows = [self.model.row(record) for record in self.model.epoch_records(quats, fixes)]
        self.push_rows(np.asarray(steps).tolist(), rows, views)

    def encode(self, row, k_sample):
        """The messages of one row (a live node's epoch), as :meth:`encode_rows`
        gives them, from the row builder."""
        imu = msg.heading_imu(row, self.timeline.ns(k_sample), self.frame)
        if imu is None:           # no heading in the epoch: nothing is published
            return []
        return [(GNSS_TOPICS['heading'],
                 bytes(msg.TYPESTORE.serialize_cdr(imu, 'sensor_msgs/msg/Imu')))]

    def encode_rows(self, rows, steps):
        """The messages of each row sampled at ``steps``: its heading, or none
        in an epoch without one (encoded together, MessageBatches.gnss_heading)."""
        kept, encoded = self.batches.gnss_heading(rows, self.timeline.ns_of_steps(steps),
                                                  self.frame)
        out = [[] for _ in rows]
        for i, data in zip(kept, encoded.messages()):
            out[i] = [(GNSS_TOPICS['heading'], data)]
        return out


def imu_values(values):
    """The kernel's (n, 6) unrounded samples rounded as
    :meth:`acres_sim.core.imu.ImuModel.sample` rounds them."""
    values = np.asarray(values, dtype=np.float64).reshape(-1, 6)
    return np.concatenate([round_decimals(values[:, :3], 6),
                           round_decimals(values[:, 3:], 8)], axis=1)


class ImuChannel(_Channel):
    """The IMU's rows and ``imu/data_raw`` (see the module docstring)."""

    topic_types = ((IMU_TOPIC, 'sensor_msgs/msg/Imu'),)
    sensor = SENSOR_IMU

    def __init__(self, vehicle):
        super().__init__(vehicle)
        self.frame = vehicle.frame_prefix + IMU_FRAME
        self._one = None

    def faulted_block(self, steps, values, views=None):
        """The kernel's samples ``values`` (n, 6, unrounded) of ``steps`` as the
        IMU puts them out (``views``: the events' views at each, None: no
        event): (steps, the values rounded, the names of the events active at
        each) -- what :meth:`push_block` pushes, for a driver that keeps them
        as arrays (the recorder)."""
        steps, values, names = self.faults.arrays(np.asarray(steps), values, views)
        return steps, imu_values(values), names

    def encode_block(self, steps, rounded):
        """``imu/data_raw`` of the rounded samples ``rounded`` of ``steps``, as
        one :class:`~acres_sim.pipeline.batches.Encoded` batch."""
        return self.batches.imu_raw(rounded, self.timeline.ns_of_steps(steps), self.frame)

    def push_block(self, steps, values, views=None):
        """The kernel's samples ``values`` (n, 6, unrounded) of ``steps``, encoded
        a block at a time (``views``: the events' views at each, None: no event)."""
        steps, rounded, names = self.faulted_block(steps, values, views)
        rows = [imu_row(v, active) for v, active in zip(rounded.tolist(), names)]
        if not self.encoding:
            self.push_many(steps, rows)
            return
        encoded = self.encode_block(steps, rounded)
        self.push_many(steps, rows, [[(IMU_TOPIC, data)] for data in encoded.messages()])

    def push_row(self, k, row, view=None):
        """One sample's row (ImuModel.sample), encoded on its own."""
        row = self.faults.row(row, view)
        if row is None:
            return
        if not self.encoding:
            self.push(k, row)
            return
        if self._one is None:
            self._one = OneImuMessage(self.batches, self.frame)
        data = self._one.encode(self.timeline.ns(k),
                                row['specific_force_flu_mps2'], row['angular_velocity_flu_radps'])
        self.push(k, row, [(IMU_TOPIC, data)])


_STAMP = struct.Struct('<iI')
_VECTOR = struct.Struct('<3d')


class OneImuMessage:
    """imu/data_raw one message at a time: the bytes of MessageBatches.imu_raw
    for a zero sample, with the stamp and the six values written in place
    (an array of one message per sample costs ten times as much)."""

    def __init__(self, batches, frame):
        encoded = batches.imu_raw(np.zeros((1, 6)), [0], frame)
        layout = batches.layout('sensor_msgs/msg/Imu', ('header.frame_id', frame))
        self.template = encoded.payload
        self.stamp_at = layout.offset('header.stamp.sec')
        self.accel_at = layout.offset('linear_acceleration.x')
        self.gyro_at = layout.offset('angular_velocity.x')

    def encode(self, stamp_ns, accel, gyro):
        data = bytearray(self.template)
        _STAMP.pack_into(data, self.stamp_at, *divmod(stamp_ns, 1_000_000_000))
        _VECTOR.pack_into(data, self.accel_at, *accel)
        _VECTOR.pack_into(data, self.gyro_at, *gyro)
        return bytes(data)


class InsChannel(_Channel):
    """The INS topics of a vehicle (see the module docstring).
    :meth:`faulted` passes a block of epochs through the
    dropout and freeze events (a freeze repeats the outputs, the truth
    columns stay fresh)."""

    sensor = SENSOR_INS
    output_columns = P_N

    def __init__(self, vehicle):
        super().__init__(vehicle)
        self.names = vehicle.topics
        self.prefix = vehicle.frame_prefix
        t = vehicle.topics
        types = [(t.odom, 'nav_msgs/msg/Odometry'), (t.fix, 'sensor_msgs/msg/NavSatFix'),
                 (t.imu, 'sensor_msgs/msg/Imu')]
        if t.velocity:
            types.append((t.velocity, 'geometry_msgs/msg/TwistStamped'))
        types.append((t.truth, 'nav_msgs/msg/Odometry'))
        self.topic_types = tuple(types)      # and /tf: the rig's, not the vehicle's

    def faulted(self, steps, results, views=None):
        """The epochs ``results`` at ``steps`` as the INS puts them out: (steps,
        results, names of the active events at each).  Pass them to
        :meth:`encode_epochs` with ``truth`` the epochs as computed."""
        return self.faults.arrays(np.asarray(steps), results, views)

    def encode_epochs(self, steps, results, tf=True, truth=None):
        """Every INS output of the epochs ``results`` at ``steps``, as (topic,
        stamps [ns], Encoded) in publishing order: odometry, its TF on /tf
        (with ``tf``), fix, IMU, velocity (if the vehicle has it), ground truth
        -- the last of ``truth`` = (steps, results) when given: the epochs as
        computed, whose ground truth a dropout (:meth:`faulted`) leaves alone
        (a freeze keeps the truth columns fresh itself)."""
        t_ns = self.timeline.ns_of_steps(steps)
        out = [(TF_TOPIC if kind == 'tf' else getattr(self.names, kind), t_ns, encoded)
               for kind, encoded in self.batches.ins_topics(results, t_ns, self.names,
                                                            self.prefix, tf)]
        if truth is not None:
            truth_ns = self.timeline.ns_of_steps(truth[0])
            out[-1] = (self.names.truth, truth_ns, self.batches.ground_truth_odometry(
                truth[1], truth_ns, UTM_FRAME, self.prefix + BASE_FRAME))
        return out
