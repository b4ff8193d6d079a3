"""Lever arms and mount frames (spec: Frames and Sample Times, Antenna Position)."""

import math

import numpy as np
import pytest

from acres_sim.core.frames import lever_arm_from_chassis, point_at_lever_arm


def yaw(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_base_footprint_mounts_are_measured_from_the_rear_axle_on_the_ground():
    # Polaris-like: wheelbase 2.064 m, CoG 0.40 m; the antenna 1.1 m ahead of the
    # rear axle and 2.15 m up is 1.1 - 0.8256 m ahead of the chassis origin, 1.75 m above it
    arm = lever_arm_from_chassis([1.1, 0.0, 2.15], 'base_footprint', 2.064, 0.40)
    assert arm == pytest.approx([1.1 - 0.4 * 2.064, 0.0, 1.75])
    assert lever_arm_from_chassis([0.0, 0.0, 1.7], 'chassis', 2.064, 0.40) == \
        pytest.approx([0.0, 0.0, 1.7])
    with pytest.raises(ValueError, match='mount_frame'):
        lever_arm_from_chassis([0, 0, 0], 'roof', 2.0, 0.4)


def test_the_antenna_follows_the_heading():
    p = np.array([10.0, 20.0, 0.5])
    r = np.array([1.0, 0.5, 2.0])          # forward 1 m, left 0.5 m, up 2 m
    facing_east = point_at_lever_arm(p, yaw(0.0), r)
    facing_north = point_at_lever_arm(p, yaw(math.pi / 2), r)
    assert facing_east == pytest.approx([11.0, 20.5, 2.5])
    assert facing_north == pytest.approx([9.5, 21.0, 2.5])   # left of north is west
