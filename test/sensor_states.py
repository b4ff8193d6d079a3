"""State rows (core.truth's T_* layout, what step sensors read) for the tests of
the step sensors: written by hand for exact motions, or recorded from the physics."""

import math

import numpy as np

from acres_sim.core.physics import (DT, Fleet, P_AIR_DENSITY, S_DRIVE, S_QX, S_VX, Terrain)
from acres_sim.core.quaternion import hamilton_product
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q, T_V, T_W, TRUTH_SIZE


def yaw_pitch_quaternion(yaw, pitch=0.0):
    """xyzw of a heading ``yaw`` (about world z) and then a pitch about body y
    (FLU: positive nose-down)."""
    return hamilton_product(0.0, 0.0, math.sin(0.5 * yaw), math.cos(0.5 * yaw),
                            0.0, math.sin(0.5 * pitch), 0.0, math.cos(0.5 * pitch))


def straight_states(n, speed, yaw=0.0, pitch=0.0, z=1.0):
    """n steps of a body moving at ``speed`` [m/s] horizontally along the heading
    ``yaw`` with the body pitched by ``pitch`` (its CoM velocity; no rotation)."""
    rows = np.zeros((n, TRUTH_SIZE))
    t = np.arange(n) / PHYSICS_HZ
    rows[:, T_P] = speed * math.cos(yaw) * t
    rows[:, T_P + 1] = speed * math.sin(yaw) * t
    rows[:, T_P + 2] = z
    rows[:, T_Q:T_Q + 4] = yaw_pitch_quaternion(yaw, pitch)
    rows[:, T_V] = speed * math.cos(yaw)
    rows[:, T_V + 1] = speed * math.sin(yaw)
    return rows


def pivot_states(n, rate, arm_from_com):
    """n steps of a body on level ground turning at ``rate`` [rad/s] about the
    vertical axis through the body point ``arm_from_com`` (body FLU from the CoM,
    which is taken for the chassis origin): the CoM circles around that point."""
    rows = np.zeros((n, TRUTH_SIZE))
    ax, ay = arm_from_com[0], arm_from_com[1]
    for k in range(n):
        yaw = rate * k / PHYSICS_HZ
        c, s = math.cos(yaw), math.sin(yaw)
        d = np.array([-(c * ax - s * ay), -(s * ax + c * ay), 0.0])   # point -> CoM, world
        rows[k, T_P:T_P + 3] = d + np.array([0.0, 0.0, 1.0])          # the point at the origin
        rows[k, T_Q:T_Q + 4] = yaw_pitch_quaternion(yaw)
        rows[k, T_V:T_V + 3] = np.cross([0.0, 0.0, rate], d)
        rows[k, T_W + 2] = rate
    return rows


def physics_run(vehicle, seconds, command, start=(0.0, 0.0, 0.0), start_speed=0.0,
                terrain=Terrain()):
    """The state rows of ``vehicle`` driven for ``seconds`` by ``command(t) ->
    (speed, yaw rate)``, starting at ``start`` (x, y, yaw) cruising at
    ``start_speed``: (rows (n, TRUTH_SIZE), drive force (n,) [N], air density)."""
    fleet = Fleet([vehicle], [start], terrain=terrain)
    if start_speed:
        fleet.reset(0, start, speed=start_speed)
    n = int(round(seconds * PHYSICS_HZ)) + 1
    rows = np.zeros((n, TRUTH_SIZE))
    drive = np.zeros(n)
    x = fleet.states[0]
    for k in range(n):
        rows[k] = x[:TRUTH_SIZE]       # p, q, v, w: the state's own columns in this order
        drive[k] = x[S_DRIVE]
        if k < n - 1:
            fleet.step(np.array([command(k * DT)]))
    assert S_QX == T_Q and S_VX == T_V
    return rows, drive, float(fleet.params[0][P_AIR_DENSITY])


def rig_block_states(rig='polaris', seconds=30):
    """``seconds`` of a rig's block states (Block.states) as the recorder's
    RigSimulation produces them, its route driven (the hold, then driving and turning)."""
    from test_block import _rig
    from acres_sim.core.block import RigSimulation

    steps = seconds * PHYSICS_HZ
    fleet, models, antenna, rates, site = _rig(rig, 1)
    sim = RigSimulation(fleet, *zip(*models), antenna, rates, steps, site)
    blocks = []
    while sim.step <= steps:
        blocks.append(sim.advance(1000)[0].states)
    return np.concatenate(blocks)


def run_in_blocks(sensor, rows, size):
    """A step sensor run over ``rows`` in blocks of ``size`` steps: (steps, samples)."""
    steps, out = [], []
    for k0 in range(0, len(rows), size):
        k, o = sensor.run_block(k0, rows[k0:k0 + size])
        steps.append(k)
        out.append(o)
    return np.concatenate(steps), np.concatenate(out)
