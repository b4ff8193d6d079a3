"""The GNSS-receiver node of one vehicle: the spec's receiver model driven by
the sim node's truth (see :mod:`acres_sim.ros.sensor_node`).

The scene (parameter ``scene``: a scene file; empty: the packaged ACRE
farmstead) blocks and reflects the satellites' signals, as in the recorder.
Publishes, at t_sample + delay_s and stamped t_sample, what the headless
recorder writes into its bag: ``gnss_receiver/fix`` (NavSatFix in the antenna
frame), ``gnss_receiver/nmea`` (the GGA sentence) and the receiver's status on
``/diagnostics``; the node's input health goes to ``/diagnostics`` once a
second of sim time.
"""

import sys

import numpy as np

from sensor_msgs.msg import NavSatFix
from std_msgs.msg import String

from acres_sim.config.node_params import GNSS_NODE_PARAMS
from acres_sim.config.scene import default_scene, load_scene
from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.gnss.receiver import GnssReceiver, gnss_epochs
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.record import messages as msg
from acres_sim.record.rows_process import timed_row
from acres_sim.ros.params import declare_node_params
from acres_sim.ros.sensor_node import SensorNode, run_node
from acres_sim.topics import ANTENNA_FRAME, GNSS_TOPICS, lever_arm
from acres_sim.warmup import warm_gnss, warmed

__all__ = ['GnssNode', 'main']


class GnssNode(SensorNode):
    sensor = 'gnss'
    executable = 'gnss_node'

    def __init__(self, **node_options):
        super().__init__('gnss_node', **node_options)

    def build(self):
        c = self.config
        site = SiteGeoreference.from_config(c)
        scene = declare_node_params(self, GNSS_NODE_PARAMS)['scene']
        self.receiver = GnssReceiver.from_config(
            c, scene=load_scene(scene) if scene else default_scene(), site=site,
            agent_index=c['agent.index'])
        self.antenna_arm = np.ascontiguousarray(lever_arm(c, 'gnss.antenna_flu_m', self.vehicle))
        # compile (or load) the receiver's kernels now, before the node is ready:
        # a first epoch that compiles for seconds would fall behind the truth
        warmed(self.get_logger().info, [gnss_epochs], lambda: warm_gnss(self.receiver))
        self.due = Due(c['gnss.hz'])
        self.frame = self.frame_prefix + ANTENNA_FRAME
        self.status_name = f'{self.frame_prefix}gnss_receiver'
        self.service = msg.navsat_service(c)
        self.fix_pub = self.create_publisher(NavSatFix, GNSS_TOPICS['fix'], self.output_qos)
        self.nmea_pub = self.create_publisher(String, GNSS_TOPICS['nmea'], self.output_qos)

    def reset_model(self):
        self.receiver.reset()
        self.due.reset(0.0)

    def on_step(self, k, truth, restart):
        t = k / PHYSICS_HZ
        if restart:
            self.due.reset(t)
        if not self.due.due(t):
            return ()
        antenna = point_at_lever_arm(truth.p, truth.R, self.antenna_arm)
        record = self.receiver.epoch_records(np.array([t]), antenna.reshape(1, 3))[0]
        return (self.receiver.row(t, antenna, record),)

    def publish_row(self, k_sample, k_delivery, row):
        timed = timed_row(row, k_sample, k_delivery / PHYSICS_HZ, self.delay_s)
        serialise = msg.TYPESTORE.serialize_cdr
        stamp = msg.ns_from_seconds(k_sample / PHYSICS_HZ)
        fix = msg.navsat_fix_from_gnss_row(timed, stamp, self.frame, self.service)
        self.fix_pub.publish(bytes(serialise(fix, 'sensor_msgs/msg/NavSatFix')))
        sentence = msg.nmea_string(timed)
        if sentence is not None:
            self.nmea_pub.publish(bytes(serialise(sentence, 'std_msgs/msg/String')))
        status = msg.diagnostics_from_gnss_row(timed, stamp, self.status_name)
        self.diagnostics_pub.publish(bytes(serialise(status, 'diagnostic_msgs/msg/DiagnosticArray')))


def main(args=None):
    return run_node(GnssNode, args)


if __name__ == '__main__':
    sys.exit(main())
