"""The block kernel (acres_sim.core.block) against the per-sample model classes
driven step by step in Python, and its decimal-year kernel against numpy."""

import datetime
import math

import numpy as np
import pytest

from acres_sim.config import load_config
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.block import RigSimulation
from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.geo.epoch import decimal_year, decimal_year_kernel, year_table
from acres_sim.core.physics import Fleet
from acres_sim.core.quaternion import quat_from_matrix
from acres_sim.config.routes import load_route
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.core.vibration import VibrationSwitches
from acres_sim.pipeline.vehicle import build_vehicle, vehicle_route


def _rig(rig, n_agents, overrides=None, ground=None, switches=None):
    """n vehicles as the recorder builds them: (fleet, per vehicle (follower,
    imu, ins, gnss), antenna lever arm, rates, site); on the terrain ``ground``
    with the vibration ``switches`` if given."""
    config = load_config(rig=rig, overrides=overrides or {})
    route = vehicle_route(rig)
    first = build_vehicle(config, rig, route=route, agent_index=0)
    vehicles = [first] + [build_vehicle(config, rig, route=route, site=first.site, agent_index=k)
                          for k in range(1, n_agents)]
    fleet = Fleet([v.params for v in vehicles], [v.start_pose for v in vehicles], ground=ground,
                  switches=None if switches is None else [switches] * n_agents)
    models = [(v.follower, v.imu, v.ins, v.gnss) for v in vehicles]
    return fleet, models, first.arms['gnss'], first.rates, first.site


def _per_sample(rig, n_agents, steps, overrides=None, rig_parts=None, start=0, out=None,
                imu_reset_at=None):
    """The reference: every model class called sample by sample from Python
    (from step ``start`` on, with the models of ``rig_parts`` if given)."""
    fleet, models, antenna, rates, _site = rig_parts or _rig(rig, n_agents, overrides)
    dues = [{name: Due(hz) for name, hz in rates.items()} for _ in models]
    for k in range(start):                       # the schedules of the steps before
        for due in dues:
            for d in due.values():
                d.due(k / PHYSICS_HZ)
    out = out or [{'imu': [], 'ins': [], 'truth': [], 'gnss': []} for _ in models]
    commands = np.zeros((n_agents, 2))
    for k in range(start, steps + 1):
        if k == imu_reset_at:
            for _follower, imu, _ins, _gnss in models:
                imu.reset()
        t = k / PHYSICS_HZ
        for i, (follower, imu, ins, gnss) in enumerate(models):
            truth = fleet.truth(i)
            if imu is not None:
                imu.physics_step(truth)
                if imu.sample(t, dues[i]['imu'].due(t)) is not None:
                    out[i]['imu'].append((k, imu._out.copy()))
            if ins is not None and dues[i]['ins'].due(t):
                ins.epoch(t, truth)
                out[i]['ins'].append((k, ins._out.copy()))
            if dues[i]['truth'].due(t):
                out[i]['truth'].append((k, np.concatenate(
                    [truth.p, quat_from_matrix(truth.R), truth.v, truth.w])))
            if gnss is not None and dues[i]['gnss'].due(t):
                out[i]['gnss'].append((k, gnss.epoch(t, point_at_lever_arm(truth.p, truth.R,
                                                                           antenna))))
            commands[i] = follower.command(truth)
        if k < steps:
            fleet.step(commands)
    return out, fleet.states.copy()


def _blocked(rig, n_agents, steps, block, overrides=None, until=None, imu_reset_at=None,
             rig_parts=None):
    parts = rig_parts or _rig(rig, n_agents, overrides)
    fleet, models, antenna, rates, site = parts
    sim = RigSimulation(fleet, *zip(*models), antenna, rates, steps, site)
    out = [{'imu': [], 'ins': [], 'truth': [], 'gnss': []} for _ in models]
    end = steps + 1 if until is None else until
    while sim.step < end:
        if sim.step == imu_reset_at:
            for _follower, imu, _ins, _gnss in models:
                imu.reset()
        for i, b in enumerate(sim.advance(min(block, end - sim.step))):
            out[i]['imu'] += list(zip(b.imu_k.tolist(), b.imu))
            out[i]['ins'] += list(zip(b.ins_k.tolist(), b.ins))
            out[i]['truth'] += list(zip(b.truth_k.tolist(), b.truth))
            gnss = models[i][3]
            if gnss is not None:
                out[i]['gnss'] += [(k, gnss.row(k / PHYSICS_HZ, a, r)) for k, a, r
                                   in zip(b.gnss_k.tolist(), b.gnss_antenna, b.gnss)]
    if until is not None:       # go on sample by sample with the same models
        return _per_sample(rig, n_agents, steps, rig_parts=parts, start=until, out=out)
    return out, fleet.states.copy(), fleet.step_index


def _assert_same(got, ref):
    for i in range(len(ref)):
        for name in ('imu', 'ins', 'truth'):
            assert [k for k, _ in got[i][name]] == [k for k, _ in ref[i][name]], name
            assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(got[i][name],
                                                                    ref[i][name])), name
        assert got[i]['gnss'] == ref[i]['gnss']


@pytest.mark.parametrize('rig, agents, block', [('polaris', 1, 120), ('polaris', 2, 37),
                                                ('maxxum', 1, 1000), ('polaris', 1, 1)])
def test_blocks_equal_the_per_sample_models_bit_for_bit(rig, agents, block):
    steps = 12 * PHYSICS_HZ    # past the Polaris's 5 s hold, so it drives
    ref, ref_states = _per_sample(rig, agents, steps)
    got, states, step_index = _blocked(rig, agents, steps, block)
    assert step_index == steps
    assert np.array_equal(states, ref_states)
    _assert_same(got, ref)
    assert len(ref[0]['ins']) == 12 * 100 + 1 and len(ref[0]['gnss']) == 12 * 10 + 1
    assert len(ref[0]['imu']) == steps + 1 - 2      # the first sample needs 3 steps
    if agents > 1:    # own noise per agent
        assert not np.array_equal(got[0]['ins'][-1][1], got[1]['ins'][-1][1])


def test_blocks_equal_the_per_sample_models_on_a_terrain_with_vibration():
    # a bumpy slope (a washboard on a 3 % grade), the engine and the parked jitter:
    # the block kernel and the Fleet's own truth and step agree bit for bit
    from test_ride import plane_field, washboard_field
    ground = washboard_field(0.01, 2.0)._replace(heights_m=plane_field(0.03).heights_m)
    switches = VibrationSwitches(engine=True, parked_jitter=True)
    steps = 12 * PHYSICS_HZ
    parts = lambda: _rig('polaris', 2, ground=ground, switches=switches)   # noqa: E731
    ref, ref_states = _per_sample('polaris', 2, steps, rig_parts=parts())
    got, states, _ = _blocked('polaris', 2, steps, 97, rig_parts=parts())
    assert np.array_equal(states, ref_states)
    _assert_same(got, ref)
    # it did ride, shake and stand: the truth left the plane and jittered while parked
    truth = np.array([row for _, row in ref[0]['truth']])
    assert np.ptp(truth[:, 2] - 0.03 * truth[:, 0]) > 1e-3
    assert np.abs(truth[:100, 7:10]).max() == pytest.approx(0.01, abs=1e-3)   # parked, its hold


@pytest.mark.parametrize('overrides, empty', [
    ({'imu.enabled': False, 'gnss.hz': 7.0, 'ins.hz': 33.0}, 'imu'),
    ({'ins.enabled': False, 'imu.hz': 50.0}, 'ins'),
    ({'gnss.enabled': False, 'imu.hz': 120.0}, 'gnss')])
def test_sensors_off_and_odd_rates(overrides, empty):
    steps = 3 * PHYSICS_HZ
    ref, _ = _per_sample('polaris', 1, steps, overrides)
    got, _, _ = _blocked('polaris', 1, steps, 50, overrides)
    assert got[0][empty] == [] and ref[0][empty] == []
    _assert_same(got, ref)
    assert len(got[0]['truth']) == 3 * (33 if 'ins.hz' in overrides else 100) + 1


def due_steps(hz, steps):
    """The spec's Due in exact integers: the n-th sample at the first step k with
    k/120 >= n/hz, i.e. ceil(120 n / hz) (a short run: no drift)."""
    return {math.ceil(PHYSICS_HZ * n / hz) for n in range(int(steps * hz / PHYSICS_HZ) + 2)}


@pytest.mark.parametrize('hz', [120.0, 100.0, 60.0, 50.0, 30.0, 1.0])
def test_the_first_imu_row_is_at_the_third_step_at_any_rate(hz):
    """Spec, IMU: the first row at the third physics step (k = 2), then a row
    at every Due -- in the block kernel and the per-sample model alike; at
    60 Hz and above the rows are those of the Due alone, as before."""
    steps = 4 * PHYSICS_HZ
    overrides = {'imu.hz': hz}
    got, _, _ = _blocked('polaris', 1, steps, 37, overrides)
    ref, _ = _per_sample('polaris', 1, steps, overrides)
    _assert_same(got, ref)
    on_due = sorted(k for k in due_steps(hz, steps) if 2 <= k <= steps)
    rows = [k for k, _ in got[0]['imu']]
    assert rows == sorted({2} | set(on_due))
    if hz >= 60.0:
        assert rows == on_due
    else:
        assert rows[:2] == [2, math.ceil(PHYSICS_HZ / hz)]


def test_per_sample_calls_go_on_after_blocks():
    """The models' bookkeeping is theirs: after blocks, their own methods continue."""
    steps = 8 * PHYSICS_HZ
    ref, ref_states = _per_sample('polaris', 1, steps)
    got, states = _blocked('polaris', 1, steps, 100, until=6 * PHYSICS_HZ + 7)
    assert np.array_equal(states, ref_states)
    _assert_same(got, ref)


def test_a_model_reset_between_blocks_is_honoured():
    steps = 4 * PHYSICS_HZ
    ref, _ = _per_sample('polaris', 1, steps, imu_reset_at=2 * PHYSICS_HZ)
    got, _, _ = _blocked('polaris', 1, steps, PHYSICS_HZ, imu_reset_at=2 * PHYSICS_HZ)
    _assert_same(got, ref)


def test_a_pending_vehicle_reset_is_refused():
    fleet, models, antenna, rates, site = _rig('polaris', 1)
    sim = RigSimulation(fleet, *zip(*models), antenna, rates, 100, site)
    sim.advance(10)
    fleet.reset(0, (1.0, 2.0, 0.3))
    with pytest.raises(ValueError, match='reset'):
        sim.advance(10)
    with pytest.raises(ValueError, match='differs'):
        RigSimulation(fleet, *zip(*models), antenna, {**rates, 'ins': 50.0}, 100, site)


def test_block_states_are_the_fleet_state_of_every_step():
    """Block.states holds each step's state as the fleet holds it (the state's own
    quaternion, not one rebuilt from R): what the live sim sends its sensor nodes.
    Every row of 13-step blocks equals the state before the step, taken step by step."""
    steps = 700
    fleet, models, antenna, rates, site = _rig('polaris', 1)
    sim = RigSimulation(fleet, *zip(*models), antenna, rates, steps, site)
    blocked = np.concatenate([sim.advance(13)[0].states for _ in range(steps // 13 + 1)])
    fleet, models, antenna, rates, site = _rig('polaris', 1)
    single = RigSimulation(fleet, *zip(*models), antenna, rates, steps, site)
    one_by_one = []
    for _ in range(steps + 1):
        one_by_one.append(fleet.states[0, :13].copy())     # p, q, v, w: the state's first 13
        assert np.array_equal(single.advance(1)[0].states[0], one_by_one[-1])
    assert blocked.shape == (steps + 1, 13)
    assert np.array_equal(blocked, np.array(one_by_one))
    assert not np.array_equal(blocked[0], blocked[-1])     # it drove


def test_an_external_command_replaces_the_route_follower():
    """commands[i] = (1, speed, yaw rate) drives like Fleet.step with that command;
    (0, ...) hands the vehicle back to its follower."""
    fleet, models, antenna, rates, site = _rig('polaris', 1)
    sim = RigSimulation(fleet, *zip(*models), antenna, rates, 600, site)
    reference = Fleet([load_vehicle('polaris')], [load_route('acre_demo').start_pose()])
    sim.commands[0] = (1.0, 2.0, 0.1)
    sim.advance(300)
    for _ in range(300):
        reference.step(np.array([[2.0, 0.1]]))
    assert np.array_equal(fleet.states, reference.states)
    assert np.hypot(*fleet.states[0, 7:9]) > 1.5
    sim.commands[0] = (0.0, 2.0, 0.1)    # the follower drives again: another path
    sim.advance(200)
    for _ in range(200):
        reference.step(np.array([[2.0, 0.1]]))
    assert not np.array_equal(fleet.states, reference.states)


_UTC = datetime.timezone.utc


@pytest.mark.parametrize('start', [datetime.datetime(2026, 9, 24, 17, 0, tzinfo=_UTC),
                                   datetime.datetime(2027, 12, 31, 23, 59, 30, tzinfo=_UTC),
                                   datetime.datetime(2028, 2, 29, 12, 0, tzinfo=_UTC)])
def test_decimal_year_kernel_equals_numpy(start):
    table = year_table(start)
    rng = np.random.default_rng(5)
    times = np.concatenate([np.arange(0, 120, 1 / 120), rng.uniform(0, 4e5, 2000), [0.0, 1e-10]])
    expected = decimal_year(start, times)
    got = np.array([decimal_year_kernel(float(t), table) for t in times])
    assert np.array_equal(got, expected)
