"""The IMU node of one vehicle: the spec's IMU model driven by the sim node's
truth (see :mod:`acres_sim.ros.sensor_node`).

Publishes ``imu/data_raw`` (sensor_msgs/Imu in the IMU frame, FLU, the row's
rounded values; orientation not provided: ``orientation_covariance[0] = -1``;
covariances the model's white-noise sigma squared) at t_sample + delay_s,
stamped t_sample -- what the headless recorder writes into its bag (both
from :class:`acres_sim.pipeline.channels.ImuChannel`).
"""

import sys

from acres_sim.core.imu import imu_difference_step, imu_sample_values, imu_takes_sample
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.warmup import warm_imu, warmed

__all__ = ['ImuNode', 'main']


class ImuNode(SensorNode):
    sensor = 'imu'
    executable = 'imu_node'

    def __init__(self, **node_options):
        super().__init__('imu_node', **node_options)

    def build(self):
        self.imu = self.vehicle.imu
        self.due = Due(self.vehicle.rates['imu'])
        # compile (or load) the kernels now, before the node is ready (see gnss_node)
        kernels = [imu_difference_step, imu_takes_sample, imu_sample_values]
        warmed(self.get_logger().info, kernels, lambda: warm_imu(self.imu))

    def reset_model(self):
        self.imu.reset()
        self.due.reset(0.0)

    def on_step(self, k, truth, restart, view, teleported):
        t = k / PHYSICS_HZ
        if restart:
            self.due.reset(t)
        # a step that does not follow, or a teleport, restarts the differences
        self.imu.physics_step(truth, restart=teleported)
        row = self.imu.sample(t, self.due.due(t), view)
        return () if row is None else (row,)


def main(args=None):
    return run_node(ImuNode, args)


if __name__ == '__main__':
    sys.exit(main())
