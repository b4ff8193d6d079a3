"""The IMU node of one vehicle: the spec's IMU model driven by the sim node's
truth (see :mod:`acres_sim.ros.sensor_node`).

Publishes ``imu/data_raw`` (sensor_msgs/Imu in the IMU frame, FLU, the row's
rounded values; orientation not provided: ``orientation_covariance[0] = -1``;
covariances the model's white-noise sigma squared) at t_sample + delay_s,
stamped t_sample -- what the headless recorder writes into its bag.
"""

import sys

import numpy as np

from sensor_msgs.msg import Imu

from acres_sim.core.imu import ImuModel
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.record import messages as msg
from acres_sim.record.batches import MessageBatches
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.topics import IMU_FRAME, IMU_TOPIC, lever_arm

__all__ = ['ImuNode', 'main']


class ImuNode(SensorNode):
    sensor = 'imu'
    executable = 'imu_node'

    def __init__(self, **node_options):
        super().__init__('imu_node', **node_options)

    def build(self):
        c = self.config
        self.imu = ImuModel.from_config(c, lever_arm(c, 'imu.position_flu_m', self.vehicle),
                                        agent_index=c['agent.index'])
        self.due = Due(c['imu.hz'])
        self.frame = self.frame_prefix + IMU_FRAME
        self.batches = MessageBatches(msg.imu_variances(c), msg.ins_variances(c),
                                      [0.0] * 6, [0.0] * 3)
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
        values = np.array([*row['specific_force_flu_mps2'], *row['angular_velocity_flu_radps']])
        stamp = msg.ns_from_seconds(k_sample / PHYSICS_HZ)
        encoded = self.batches.imu_raw(values.reshape(1, 6), [stamp], self.frame)
        self.pub.publish(encoded.payload)


def main(args=None):
    return run_node(ImuNode, args)


if __name__ == '__main__':
    sys.exit(main())
