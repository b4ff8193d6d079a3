"""Zones of the tile (acres_sim.core.zones) against independent references:
matplotlib's point-in-polygon test, the distance to a circle's centre, and
hand-made edge cases."""

import math

from matplotlib.path import Path
import numpy as np
import pytest

from acres_sim.core.zones import CIRCLE, POLYGON, inside_zone, inside_zones, make_zones, no_zones

# a barn's L-shaped yard (concave), a triangle and a star-like concave polygon
POLYGONS = [
    [[-40.0, -30.0], [60.0, -30.0], [60.0, 10.0], [10.0, 10.0], [10.0, 50.0], [-40.0, 50.0]],
    [[0.0, 0.0], [100.0, 0.0], [30.0, 80.0]],
    [[0.0, 0.0], [50.0, 20.0], [100.0, 0.0], [80.0, 50.0], [100.0, 100.0], [50.0, 80.0],
     [0.0, 100.0], [20.0, 50.0]],
]


def random_points(n, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-60.0, 120.0, size=(n, 2))


@pytest.mark.parametrize('corners', POLYGONS)
@pytest.mark.parametrize('reverse', [False, True])
def test_polygons_agree_with_matplotlib(corners, reverse):
    corners = corners[::-1] if reverse else corners
    zones = make_zones([{'polygon': corners}])
    points = random_points(4000)
    # keep clear of the edges, where the two tests may round differently
    path = Path(np.array(corners))
    clear = path.contains_points(points, radius=0.05) == \
        path.contains_points(points, radius=-0.05)
    expected = path.contains_points(points)
    got = inside_zones(zones, 0, points)
    assert np.array_equal(got[clear], expected[clear])
    assert 0.1 < expected.mean() < 0.9 and clear.mean() > 0.99   # straddles it, few on edges


def test_circles_are_the_distance_to_their_centre():
    zones = make_zones([{'center': [20.0, -5.0], 'radius': 30.0}])
    points = random_points(4000)
    expected = np.hypot(points[:, 0] - 20.0, points[:, 1] + 5.0) <= 30.0
    assert np.array_equal(inside_zones(zones, 0, points), expected)
    assert zones.kind[0] == CIRCLE
    assert inside_zone(zones, 0, 50.0, -5.0, 0.0)          # on the rim: inside


def test_a_height_band_limits_the_zone():
    zones = make_zones([{'polygon': POLYGONS[1], 'z_min': 0.0, 'z_max': 12.0},
                        {'center': [0.0, 0.0], 'radius': 5.0, 'z_max': 3.0}])
    assert inside_zone(zones, 0, 40.0, 20.0, 5.0)
    assert not inside_zone(zones, 0, 40.0, 20.0, 12.5)
    assert not inside_zone(zones, 0, 40.0, 20.0, -0.1)
    assert inside_zone(zones, 1, 1.0, 1.0, -100.0)          # no floor: every height below
    assert not inside_zone(zones, 1, 1.0, 1.0, 3.5)


def test_many_zones_in_one_table_keep_their_own_corners():
    zones = make_zones([{'polygon': POLYGONS[0]}, {'center': [500.0, 500.0], 'radius': 1.0},
                        {'polygon': POLYGONS[2]}])
    assert list(zones.kind) == [POLYGON, CIRCLE, POLYGON]
    assert list(zones.start) == [0, 0, 6] and list(zones.count) == [6, 0, 8]
    points = random_points(2000, seed=9)
    for i, corners in ((0, POLYGONS[0]), (2, POLYGONS[2])):
        path = Path(np.array(corners))
        clear = path.contains_points(points, radius=0.05) == \
            path.contains_points(points, radius=-0.05)
        assert np.array_equal(inside_zones(zones, i, points)[clear],
                              path.contains_points(points)[clear])
    assert not inside_zones(zones, 1, points).any()


@pytest.mark.parametrize('item, words', [
    ({'polygon': [[0, 0], [1, 1]]}, 'at least 3 corners'),
    ({'polygon': [[0, 0], [1, 1], [math.nan, 2]]}, 'finite'),
    ({'center': [0, 0], 'radius': 0.0}, 'radius > 0'),
    ({'center': [0, math.inf], 'radius': 3.0}, 'finite centre'),
    ({'center': [0, 0], 'radius': 3.0, 'z_min': 5.0, 'z_max': 1.0}, 'below z_max'),
])
def test_bad_zones_are_named(item, words):
    with pytest.raises(ValueError, match=words) as caught:
        make_zones([{'center': [0, 0], 'radius': 1.0}, item])
    assert str(caught.value).startswith('zone 1:')


def test_an_empty_table():
    zones = no_zones()
    assert zones.kind.shape == (0,) and zones.vertices.shape == (0, 2)
    assert inside_zones(make_zones([{'center': [0, 0], 'radius': 1}]), 0,
                        np.zeros((0, 2))).shape == (0,)
