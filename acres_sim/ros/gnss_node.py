"""The GNSS-receiver node of one vehicle: the spec's receiver model driven by
the sim node's truth (see :mod:`acres_sim.ros.sensor_node`).

The scene (parameter ``scene``: a scene file; empty: the packaged ACRE
farmstead) blocks and reflects the satellites' signals, as in the recorder.
Publishes, at t_sample + delay_s and stamped t_sample, what the headless
recorder writes into its bag (both from
:class:`acres_sim.pipeline.channels.GnssChannel`): ``gnss_receiver/fix``
(NavSatFix in the antenna frame), ``gnss_receiver/nmea`` (the GGA sentence,
then the GST with ``gnss.nmea.gst``), ``gnss_receiver/gpsfix`` (gps_msgs/GPSFix,
with ``gnss.gpsfix``; left out with a warning where gps_msgs is not installed)
and the receiver's status on ``/diagnostics``; with ``gnss.heading.enabled``
the dual-antenna heading on ``gnss_receiver/heading``
(:class:`acres_sim.pipeline.channels.GnssHeadingChannel`), from the quaternion
of each epoch's truth and the receiver's fix state.  The node's input health
goes to ``/diagnostics`` once a second of sim time.
"""

import sys

import numpy as np

from acres_sim.config.node_params import GNSS_NODE_PARAMS
from acres_sim.config.scene import load_scene
from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.gnss.heading import heading_epochs
from acres_sim.core.gnss.receiver import REC_FIX, gnss_epochs
from acres_sim.core.physics import S_QX
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.ros.params import declare_node_params
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.warmup import warm_gnss, warm_heading, warmed

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
        warmed(self.get_logger().info, [gnss_epochs],
               lambda: warm_gnss(self.receiver, self.antenna_arm))
        self.heading = self.vehicle.gnss_heading
        self.heading_channel = self.vehicle.channels.get('gnss_heading')
        if self.heading is not None:
            warmed(self.get_logger().info, [heading_epochs], lambda: warm_heading(self.heading))
        self.due = Due(self.vehicle.rates['gnss'])

    def reset_model(self):
        self.receiver.reset()
        if self.heading is not None:
            self.heading.reset()
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
        if self.heading is not None:     # the state's quaternion of this truth (as the recorder's)
            quat = self._state[S_QX:S_QX + 4].reshape(1, 4)
            heading = self.heading.epoch_records(quat, record[REC_FIX:REC_FIX + 1])[0]
            self.heading_channel.push_row(k, self.heading.row(heading), view)
        return (self.receiver.row(t, antenna, record),)


def main(args=None):
    return run_node(GnssNode, args)


if __name__ == '__main__':
    sys.exit(main())
