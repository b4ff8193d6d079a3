"""The GNSS and IMU nodes fed truth messages in process (no DDS peer): the
rows they deliver equal the block kernel's, gaps and restarts are counted and
handled, bad messages are refused, bad parameters are one config error."""

import calendar
import datetime
from fractions import Fraction

import numpy as np
import pytest

pytestmark = pytest.mark.requires_rclpy

STEPS = 4 * 120


def rig_blocks(rig='polaris', steps=STEPS, overrides=None):
    """The block kernel's run of one vehicle as the recorder builds it: its
    per-step states, IMU samples (rounded as the rows) and GNSS rows, the
    recorder's reference."""
    from acres_sim.config import load_config
    from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, vehicle_route

    vehicle = build_vehicle(load_config(rig=rig, overrides=overrides), rig,
                            route=vehicle_route(rig), sensors=('gnss', 'imu'))
    gnss = vehicle.gnss
    b = rig_simulation([vehicle], steps).advance(steps + 1)[0]
    imu_rows = [(k, [round(x, 6) for x in v[:3]] + [round(x, 8) for x in v[3:]])
                for k, v in zip(b.imu_k.tolist(), b.imu.tolist())]
    gnss_rows = [(k, gnss.row(k / 120, a, r)) for k, a, r in zip(b.gnss_k.tolist(),
                                                                 b.gnss_antenna, b.gnss)]
    return b.states, imu_rows, gnss_rows


def delivery(k_sample, delay_s=0.05):
    """The spec's Drain in float64 seconds: the first step whose time reaches
    t_sample + delay_s."""
    k = k_sample
    while k / 120 < k_sample / 120 + delay_s:
        k += 1
    return k


def start_ns(config):
    """The ROS time of step 0: gnss.datum.start_utc as ns since 1970."""
    utc = datetime.datetime.fromisoformat(config['gnss.datum.start_utc'])
    return calendar.timegm(utc.utctimetuple()) * 10**9


def truth_messages(states, prefix=''):
    from acres_sim.config import load_config
    from acres_sim.pipeline import messages as msg
    from acres_sim.pipeline.batches import MessageBatches

    c = load_config(rig='polaris')
    batches = MessageBatches(msg.imu_variances(c), msg.ins_variances(c), [0.0] * 6, [0.0] * 3)
    t_ns = start_ns(c) + np.array([round(Fraction(k * 10**9, 120)) for k in range(len(states))])
    return batches.physics_truth(states, t_ns, prefix).messages()


def delivered(node):
    """Collect what ``node`` delivers instead of publishing it: (sample step,
    delivery step, the row without its times) -- of the sensor's own channel
    (the GNSS node's heading rows, ``heading_valid``, left out)."""
    out = []
    times = ('sample_time_s', 'available_time_s', 'delivery_time_s')

    def collect(delivery):
        if 'heading_valid' in delivery.row:
            return
        row = {key: value for key, value in delivery.row.items() if key not in times}
        assert delivery.row['sample_time_s'] == delivery.k_sample / 120
        assert delivery.row['delivery_time_s'] == delivery.k_delivery / 120
        out.append((delivery.k_sample, delivery.k_delivery, row))
    node.deliver = collect
    return out


def make_node(cls, **parameters):
    from rclpy.parameter import Parameter

    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return cls(parameter_overrides=overrides)


@pytest.fixture(scope='module')
def reference():
    return rig_blocks()


def imu_rows_taking(node, out, states):
    """The IMU node takes the truth of ``states``: (sample step, its six values)
    of each row it delivered into ``out`` (see :func:`delivered`)."""
    for data in truth_messages(states):
        node._take_truth(data)
    return [(k, row['specific_force_flu_mps2'] + row['angular_velocity_flu_radps'])
            for k, _kd, row in out]


def test_imu_node_delivers_the_kernels_rows(ros_context, reference):
    from acres_sim.ros.imu_node import ImuNode

    states, imu_rows, _ = reference
    node = make_node(ImuNode)
    try:
        out = delivered(node)
        got = imu_rows_taking(node, out, states)
        assert got == [(k, v) for k, v in imu_rows if delivery(k) <= STEPS]   # by the end
        assert all(kd == delivery(k) for k, kd, _ in out)                      # delay 0.05 s
        assert node.counts['gaps'] == 0 and node.counts['truth'] == STEPS + 1
    finally:
        node.destroy_node()


def test_a_slow_imu_node_gives_its_first_row_at_the_third_step_as_the_kernel(ros_context):
    """Below 60 Hz the first row is at k = 2 (spec: IMU), in the node as in the
    kernel (one rule, acres_sim.core.imu.imu_takes_sample)."""
    from acres_sim.ros.imu_node import ImuNode

    states, imu_rows, _ = rig_blocks(overrides={'imu.hz': 30.0})
    node = make_node(ImuNode, **{'imu.hz': 30.0})
    try:
        out = delivered(node)
        got = imu_rows_taking(node, out, states)
        assert got == [(k, v) for k, v in imu_rows if delivery(k) <= STEPS]
        assert [k for k, _ in got[:3]] == [2, 4, 8]
    finally:
        node.destroy_node()


def test_gnss_node_delivers_the_kernels_rows(ros_context, reference):
    from acres_sim.ros.gnss_node import GnssNode

    states, _, gnss_rows = reference
    node = make_node(GnssNode)
    try:
        out = delivered(node)
        for data in truth_messages(states):
            node._take_truth(data)
        assert [(k, row) for k, _kd, row in out] == [(k, r) for k, r in gnss_rows
                                                     if delivery(k) <= STEPS]
        assert len(out) == 4 * 10
    finally:
        node.destroy_node()


def test_the_gnss_node_sees_the_sky_of_its_scene(ros_context, reference, tmp_path):
    """In the packaged farmstead the Polaris starts in the garage (no satellite in
    view); in a scene file without buildings the same receiver sees the sky."""
    from acres_sim.ros.gnss_node import GnssNode

    states, _, gnss_rows = reference
    assert all(row['satellites_used'] == 0 for _k, row in gnss_rows)
    scene = tmp_path / 'open.yaml'
    scene.write_text('scene: {name: open_field}\n')
    node = make_node(GnssNode, scene=str(scene))
    try:
        out = delivered(node)
        for data in truth_messages(states):
            node._take_truth(data)
        assert out and all(row['satellites_used'] >= 5 for _k, _kd, row in out)
    finally:
        node.destroy_node()


def test_a_gap_restarts_the_imu_and_is_counted(ros_context, reference):
    from acres_sim.ros.imu_node import ImuNode

    states, imu_rows, _ = reference
    node = make_node(ImuNode)
    try:
        out = delivered(node)
        messages = truth_messages(states)
        for k, data in enumerate(messages):
            if not 200 <= k < 230:          # 30 steps lost
                node._take_truth(data)
        assert (node.counts['gaps'], node.counts['steps_missed']) == (1, 30)
        got = {k: v for k, _kd, r in out
               for v in [r['specific_force_flu_mps2'] + r['angular_velocity_flu_radps']]}
        reference_rows = dict(imu_rows)
        assert all(got[k] == reference_rows[k] for k in got if k < 200)
        # the differences start again at 230: no sample before two differences
        assert not any(230 <= k < 232 for k in got) and 232 in got
        assert node.imu.restarts == 2
        diagnostics = node._input_diagnostics(STEPS)
        assert diagnostics.status[0].level == diagnostics.status[0].WARN
        assert {kv.key: kv.value for kv in diagnostics.status[0].values}['gaps'] == '1'
        output = diagnostics.status[1]            # the output lacks those samples too
        values = {kv.key: kv.value for kv in output.values}
        assert output.level == output.WARN and values['output_gaps'] == '1'
        assert 20 < int(values['samples_missing']) < 35     # 30 steps + 2 differences at 100 Hz
    finally:
        node.destroy_node()


def test_a_node_started_after_the_sim_reports_the_output_it_lacks(ros_context, reference):
    """Its input is complete from its first step on, but its subscribers miss
    everything before that step."""
    from acres_sim.ros.gnss_node import GnssNode

    states, _, _ = reference
    node = make_node(GnssNode)
    try:
        delivered(node)
        for data in truth_messages(states)[240:]:     # started 2 s after the sim
            node._take_truth(data)
        truth_input, output = node._input_diagnostics(STEPS).status
        assert truth_input.level == truth_input.OK and node.counts['gaps'] == 0
        values = {kv.key: kv.value for kv in output.values}
        assert output.level == output.WARN and 'gaps in the output' in output.message
        assert (values['output_gaps'], values['samples_missing']) == ('1', '20')   # 2 s at 10 Hz
    finally:
        node.destroy_node()


def test_truth_going_back_resets_the_model(ros_context, reference):
    from acres_sim.ros.imu_node import ImuNode

    states, _, _ = reference
    node = make_node(ImuNode)
    try:
        out = delivered(node)
        messages = truth_messages(states)
        for data in messages[:100] + messages:    # the sim started again
            node._take_truth(data)
        assert node.counts['restarts'] == 1
        second = [(k, r) for k, _kd, r in out][-10:]
        fresh = make_node(ImuNode)
        try:
            again = delivered(fresh)
            for data in messages:
                fresh._take_truth(data)
            assert [(k, r) for k, _kd, r in again][-10:] == second
        finally:
            fresh.destroy_node()
    finally:
        node.destroy_node()


def test_a_message_of_another_vehicle_is_refused(ros_context, reference):
    from acres_sim.ros.imu_node import ImuNode

    states, _, _ = reference
    node = make_node(ImuNode)
    try:
        delivered(node)
        node._take_truth(truth_messages(states[:1], prefix='agent7/')[0])
        assert node.counts['bad_messages'] == 1 and node.counts['truth'] == 0
    finally:
        node.destroy_node()


@pytest.mark.parametrize('parameters, message', [
    ({'gnss.hz': 500.0}, r'gnss\.hz = 500\.0 .*out of range; allowed: .*120'),
    ({'gnss.hz': 'fast'}, r'gnss\.hz .*the wrong type'),
    ({'vehicle': 'tank'}, r"vehicle = 'tank' .*allowed: polaris or maxxum"),
    ({'gnss.hzz': 5.0}, r"unknown parameter 'gnss\.hzz' for /gnss_node; did you mean 'gnss\.hz'"),
    ({'gnss.constellations.gps': False, 'gnss.constellations.galileo': False,
      'gnss.constellations.glonass': False}, 'all systems are off'),
])
def test_bad_parameters_are_one_config_error(ros_context, parameters, message):
    from acres_sim.config import ConfigError
    from acres_sim.ros.gnss_node import GnssNode

    with pytest.raises(ConfigError, match=message):
        make_node(GnssNode, **parameters)


def test_parameters_are_declared_with_descriptors(ros_context):
    from acres_sim.config import key
    from acres_sim.ros.gnss_node import GnssNode

    node = make_node(GnssNode)
    try:
        d = node.describe_parameter('gnss.hz')
        assert key('gnss.hz').description in d.description and '[Hz]' in d.description
        assert d.read_only
        assert (d.floating_point_range[0].from_value, d.floating_point_range[0].to_value) \
            == (key('gnss.hz').low, key('gnss.hz').high)
        assert node.describe_parameter('seed').integer_range[0].to_value == 2**63 - 1
        assert 'polaris or maxxum' in node.describe_parameter('vehicle').additional_constraints
    finally:
        node.destroy_node()


def test_two_truth_streams_give_one_warning_not_one_per_message(ros_context, reference, capfd):
    """Truth of two sims interleaved (two rigs on one domain): every message goes
    back in time, the warning is throttled."""
    from acres_sim.ros.imu_node import ImuNode

    states, _, _ = reference
    node = make_node(ImuNode)
    try:
        delivered(node)
        messages = truth_messages(states[:240])
        for a, b in zip(messages, messages):
            node._take_truth(a)
            node._take_truth(b)
        assert node.counts['restarts'] >= 200
        assert capfd.readouterr().err.count('truth went back') == 1
    finally:
        node.destroy_node()


def test_progress_is_said_again_only_while_no_truth_comes(ros_context, reference, monkeypatch):
    """While the truth flows, the steps report the progress (every 60, and at
    least every PROGRESS_MOVING_S of wall time, so a slow node is not taken for
    stuck) and the idle timer says nothing (with 25 vehicles its reports and
    the events' were 500 messages a second); the event entry taken is said at
    the first truth; once no truth has come for PROGRESS_IDLE_S, the timer says
    both again.  The times are set by hand: nothing here waits on the clock."""
    from acres_sim.ros import sensor_node
    from acres_sim.ros.imu_node import ImuNode
    from acres_sim.ros.sensor_node import PROGRESS_EVERY, PROGRESS_IDLE_S, PROGRESS_MOVING_S

    monkeypatch.setattr(sensor_node, 'PROGRESS_MOVING_S', float('inf'))
    states, _, _ = reference
    node = make_node(ImuNode)
    try:
        said = []
        report_progress = node._report_progress

        def progress():
            said.append(('progress', node.last_step))
            report_progress()
        node._report_progress = progress
        node.injected.report = lambda: said.append(('events', node.last_step))
        delivered(node)
        messages = truth_messages(states[:PROGRESS_EVERY + 3])
        for data in messages[:PROGRESS_EVERY + 2]:
            node._take_truth(data)
            node._report_when_idle()           # a tick of the timer right after a truth
        assert said == [('events', 0), ('progress', 0), ('progress', PROGRESS_EVERY)]
        node._truth_at -= PROGRESS_IDLE_S       # no truth since
        node._report_when_idle()
        assert said[3:] == [('progress', PROGRESS_EVERY + 1), ('events', PROGRESS_EVERY + 1)]
        monkeypatch.setattr(sensor_node, 'PROGRESS_MOVING_S', PROGRESS_MOVING_S)
        node._reported_at -= PROGRESS_MOVING_S  # a slow node: the last report a while ago
        node._take_truth(messages[PROGRESS_EVERY + 2])
        assert said[5:] == [('progress', PROGRESS_EVERY + 2)]
    finally:
        node.destroy_node()


def test_a_sample_nobody_subscribes_to_is_delivered_not_published(ros_context, reference):
    """The input diagnostics count the samples whose time came ('delivered')
    apart from those that went out ('published'): with no subscriber on the
    node's outputs nothing is published; with one, every sample is."""
    from acres_sim.ros.listeners import Listeners
    from acres_sim.ros.imu_node import ImuNode

    states, _imu_rows, _ = reference
    node = make_node(ImuNode)
    try:
        node.listeners = Listeners(check_s=-1.0)          # the count asked at every publish
        messages = truth_messages(states)
        for data in messages[:STEPS // 2]:
            node._take_truth(data)
        counts = dict(node.counts)
        assert counts['delivered'] > 0 and counts['published'] == 0
        publisher = next(iter(node.outputs.values()))   # imu/data_raw: a subscriber now
        node.create_subscription(publisher.msg_type, publisher.topic_name, lambda _m: None, 10)
        for data in messages[STEPS // 2:]:
            node._take_truth(data)
        values = {kv.key: kv.value for kv in node._input_diagnostics(STEPS).status[0].values}
        delivered_later = int(values['delivered']) - counts['delivered']
        assert delivered_later > 0 and int(values['published']) == delivered_later
    finally:
        node.destroy_node()

