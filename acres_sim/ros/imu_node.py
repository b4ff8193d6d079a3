"""The IMU node of one vehicle: the spec's IMU model driven by the sim node's
truth (see :mod:`acres_sim.ros.sensor_node`).

Publishes ``imu/data_raw`` (sensor_msgs/Imu in the IMU frame, FLU, the row's
rounded values; orientation not provided: ``orientation_covariance[0] = -1``;
covariances the model's white-noise sigma squared) at t_sample + delay_s,
stamped t_sample -- what the headless recorder writes into its bag.
"""

import struct
import sys

import numpy as np

from sensor_msgs.msg import Imu

from acres_sim.core.imu import imu_difference_step, imu_sample_values
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline.models import imu_model
from acres_sim.record import messages as msg
from acres_sim.record.batches import MessageBatches
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.topics import IMU_FRAME, IMU_TOPIC, lever_arm
from acres_sim.warmup import warm_imu, warmed

__all__ = ['ImuNode', 'main']


class ImuNode(SensorNode):
    sensor = 'imu'
    executable = 'imu_node'

    def __init__(self, **node_options):
        super().__init__('imu_node', **node_options)

    def build(self):
        c = self.config
        self.imu = imu_model(c, lever_arm(c, 'imu.position_flu_m', self.vehicle), c['agent.index'])
        self.due = Due(c['imu.hz'])
        self.frame = self.frame_prefix + IMU_FRAME
        # compile (or load) the kernels now, before the node is ready (see gnss_node)
        warmed(self.get_logger().info, [imu_difference_step, imu_sample_values],
               lambda: warm_imu(self.imu))
        batches = MessageBatches(msg.imu_variances(c), msg.ins_variances(c), [0.0] * 6, [0.0] * 3)
        self.message = OneMessage(batches, self.frame)
        self.pub = self.create_publisher(Imu, IMU_TOPIC, self.output_qos)

    def reset_model(self):
        self.imu.reset()
        self.due.reset(0.0)

    def on_step(self, k, truth, restart):
        t = k / PHYSICS_HZ
        if restart:
            self.due.reset(t)
        self.imu.physics_step(truth)     # a step that does not follow restarts the differences
        if not self.due.due(t):
            return ()
        row = self.imu.sample(t)
        return () if row is None else (row,)

    def publish_row(self, k_sample, k_delivery, row):
        self.pub.publish(self.message.encode(msg.ns_from_seconds(k_sample / PHYSICS_HZ),
                                             row['specific_force_flu_mps2'],
                                             row['angular_velocity_flu_radps']))


class OneMessage:
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


_STAMP = struct.Struct('<iI')
_VECTOR = struct.Struct('<3d')


def main(args=None):
    return run_node(ImuNode, args)


if __name__ == '__main__':
    sys.exit(main())
