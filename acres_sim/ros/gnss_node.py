"""The GNSS-receiver node of one vehicle: the spec's receiver model driven by
the sim node's truth (see :mod:`acres_sim.ros.sensor_node`).

The scene (parameter ``scene``: a scene file; empty: the packaged ACRE
farmstead) blocks and reflects the satellites' signals, as in the recorder.
Publishes, at t_sample + delay_s and stamped t_sample, what the headless
recorder writes into its bag (both from
:class:`acres_sim.pipeline.channels.GnssChannel`): ``gnss_receiver/fix``
(NavSatFix in the antenna frame), ``gnss_receiver/nmea`` (the GGA sentence)
and the receiver's status on ``/diagnostics``; the node's input health goes
to ``/diagnostics`` once a second of sim time.
"""

import sys

import numpy as np

from acres_sim.config.node_params import GNSS_NODE_PARAMS
from acres_sim.config.scene import load_scene
from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.gnss.receiver import gnss_epochs
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.ros.params import declare_node_params
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.warmup import warm_gnss, warmed

__all__ = ['GnssNode', 'main']


class GnssNode(SensorNode):
    sensor = 'gnss'
    executable = 'gnss_node'

    def __init__(self, **node_options):
        super().__init__('gnss_node', **node_options)

    def scene(self):
        path = declare_node_params(self, GNSS_NODE_PARAMS)['scene']
        return load_scene(path) if path else None

    def build(self):
        self.receiver = self.vehicle.gnss
        self.antenna_arm = np.ascontiguousarray(self.vehicle.arms['gnss'])
        # compile (or load) the receiver's kernels now, before the node is ready:
        # a first epoch that compiles for seconds would fall behind the truth
        warmed(self.get_logger().info, [gnss_epochs], lambda: warm_gnss(self.receiver))
        self.due = Due(self.vehicle.rates['gnss'])

    def reset_model(self):
        self.receiver.reset()
        self.due.reset(0.0)

    def on_step(self, k, truth, restart, view, teleported):
        t = k / PHYSICS_HZ
        if restart:
            self.due.reset(t)
        if not self.due.due(t):
            return ()
        antenna = point_at_lever_arm(truth.p, truth.R, self.antenna_arm)
        record = self.receiver.epoch_records(np.array([t]), antenna.reshape(1, 3),
                                             None if view is None else view[np.newaxis])[0]
        return (self.receiver.row(t, antenna, record),)


def main(args=None):
    return run_node(GnssNode, args)


if __name__ == '__main__':
    sys.exit(main())
