"""The ride of a vehicle on a terrain: four wheels on springs and tyres, the
forces that heave, roll and pitch the chassis (used by
:mod:`acres_sim.core.physics` when the run has a terrain).

Corners
-------
Corner ``i`` of :data:`CORNERS` (front left, front right, rear left, rear right)
sits at ``(x_i, y_i)`` from the centre of mass in body axes: the front axle
``0.6 L`` ahead of the rear axle, the chassis origin ``0.4 L`` (the spec's rule),
half the track to each side, less the CoM offset.  Its attachment point is
``A_i = p_c + R (x_i, y_i, 0)``; the wheel under it touches the ground at
``A_i``'s east and north.

Forces (vertical, small angles)
-------------------------------
A suspended corner has a wheel of mass ``m_u`` with its own height ``z_u``
(a degree of freedom).  With ``s = A_z - z_u`` the spring's length coordinate,
``d = z_u - z_g`` the wheel centre's height above the ground ``z_g``, and
``^.`` their rates::

    F_s = W_s + k_s (s0 - s) - c_s s.            (spring and damper, on the body)
    F_t = max(0, W_s + m_u g + k_t (r_w - d) - c_t d.)   (tyre, on the wheel)
    m_u z_u.. = F_t - F_s - m_u g

The gaps are measured vertically and scaled by the body z axis' up component
(the gap along the body normal of a body parallel to the ground).  A corner of
a rigid axle (``suspension_stiffness = 0``) has no wheel of its
own: the wheel moves with the body and the tyre pushes on the body directly
(``F = max(0, W_s + k_t (H - (A_z - z_g)) - c_t (A_z. - z_g.))``).  ``W_s`` are the
static loads of the sprung mass ``m_s`` (the vehicle's mass less the suspended
wheels), split so that forces and moments balance about the CoM; ``H`` is the
CoM's nominal height above the ground (``cog_height + com_z``), ``s0 = H -
r_w``.  So on level ground at rest every force balances exactly in the nominal
pose of the flat-plane model, and a tyre never pulls (it leaves the ground).

On the body the corner forces act along body z: their sum over ``m_s`` less
gravity's body-z part is the heave acceleration, and their moments
``M_x = sum y_i F_i``, ``M_y = -sum x_i F_i`` roll and pitch it, with the moments
of the tyres' horizontal forces, which act at the ground ``H`` below the CoM
(``M_x += H F_y``, ``M_y -= H F_x``: the body leans out of a turn, squats and
dives).  Euler's equations for roll and pitch keep their gyroscopic terms.

Simplified: vertical spring axes (no suspension geometry, no anti-dive or
roll centre); a point contact (no tyre enveloping of bumps shorter than the
contact patch, which the roughness profile's shortest wavelength of 0.5 m
stands in for); the tyres' lateral and longitudinal forces keep their static
loads (:func:`acres_sim.core.physics.accelerations`), so load transfer tilts
the body but does not move the friction limits.
"""

import math

from acres_sim.core.frames import CHASSIS_AHEAD_OF_REAR_AXLE
from acres_sim.core.jit import njit
from acres_sim.core.terrain import ground_height
from acres_sim.core.vehicles import (
    P_COG_HEIGHT, P_COM_X, P_COM_Y, P_COM_Z, P_MASS, P_SUSP_C_FRONT, P_SUSP_C_REAR,
    P_SUSP_K_FRONT, P_SUSP_K_REAR, P_TRACK, P_TYRE_C_FRONT, P_TYRE_C_REAR, P_TYRE_K_FRONT,
    P_TYRE_K_REAR, P_UNSPRUNG_FRONT, P_UNSPRUNG_REAR, P_WHEEL_RADIUS, P_WHEELBASE)

__all__ = ['CORNERS', 'corner', 'corner_forces', 'corner_loads', 'hop_frequency_hz',
           'nominal_height', 'sprung_mass', 'suspended', 'wheel_ground']

CORNERS = ('front_left', 'front_right', 'rear_left', 'rear_right')


@njit(cache=True)
def corner(p, i):
    """(x_i, y_i) of corner ``i`` from the CoM, body axes [m]."""
    L = p[P_WHEELBASE]
    x = ((1.0 - CHASSIS_AHEAD_OF_REAR_AXLE) * L if i < 2
         else -CHASSIS_AHEAD_OF_REAR_AXLE * L) - p[P_COM_X]
    y = (0.5 if i % 2 == 0 else -0.5) * p[P_TRACK] - p[P_COM_Y]
    return x, y


@njit(cache=True)
def suspended(p, i):
    """Whether corner ``i`` has a spring (and a wheel degree of freedom)."""
    return (p[P_SUSP_K_FRONT] if i < 2 else p[P_SUSP_K_REAR]) > 0.0


@njit(cache=True)
def _axle(p, i):
    """(k_s, c_s, m_u, k_t, c_t) of corner ``i``'s axle."""
    if i < 2:
        return (p[P_SUSP_K_FRONT], p[P_SUSP_C_FRONT], p[P_UNSPRUNG_FRONT], p[P_TYRE_K_FRONT],
                p[P_TYRE_C_FRONT])
    return (p[P_SUSP_K_REAR], p[P_SUSP_C_REAR], p[P_UNSPRUNG_REAR], p[P_TYRE_K_REAR],
            p[P_TYRE_C_REAR])


@njit(cache=True)
def sprung_mass(p):
    """The vehicle's mass less the wheels of suspended corners [kg]."""
    m = p[P_MASS]
    for i in range(4):
        if suspended(p, i):
            m -= _axle(p, i)[2]
    return m


@njit(cache=True)
def nominal_height(p):
    """H: the CoM's height above level ground in the nominal pose [m]."""
    return p[P_COG_HEIGHT] + p[P_COM_Z]


@njit(cache=True)
def corner_loads(p, g):
    """The four static loads W_s of the sprung mass [N], balancing its weight
    and its moments about the CoM."""
    xf, yl = corner(p, 0)
    xr, yr = corner(p, 3)
    w = sprung_mass(p) * g
    front = w * (-xr) / (xf - xr)
    rear = w - front
    left = (-yr) / (yl - yr)
    return front * left, front * (1.0 - left), rear * left, rear * (1.0 - left)


@njit(cache=True)
def wheel_ground(field, x, y, vx, vy, roughness_on):
    """Ground height under a wheel at (x, y) moving at (vx, vy), and its rate."""
    z, gx, gy = ground_height(field, x, y, roughness_on)
    return z, gx * vx + gy * vy


@njit(cache=True)
def corner_forces(p, g, i, a_z, a_rate, zg, zg_rate, zu, zu_rate, load, cos_tilt):
    """(force on the body, acceleration of the wheel) of corner ``i``: ``a_z``,
    ``a_rate`` the attachment's height and rate, ``zg``, ``zg_rate`` the
    ground's under the wheel, ``zu``, ``zu_rate`` the wheel's (suspended
    corners), ``load`` its static load W_s; ``cos_tilt`` the body z axis' up
    component, which turns the vertical gaps into gaps along the body's normal
    (so that a body at rest on a plane has its nominal gaps on any slope)."""
    k_s, c_s, m_u, k_t, c_t = _axle(p, i)
    H = nominal_height(p)
    c = cos_tilt
    if k_s > 0.0:
        s0 = H - p[P_WHEEL_RADIUS]
        f_s = load + k_s * (s0 - (a_z - zu) * c) - c_s * (a_rate - zu_rate) * c
        f_t = load + m_u * g + (k_t * (p[P_WHEEL_RADIUS] - (zu - zg) * c)
                                - c_t * (zu_rate - zg_rate) * c)
        f_t = max(f_t, 0.0)
        return f_s, (f_t - f_s) / m_u - g if m_u > 0.0 else 0.0
    f = load + k_t * (H - (a_z - zg) * c) - c_t * (a_rate - zg_rate) * c
    return max(f, 0.0), 0.0


@njit(cache=True)
def hop_frequency_hz(p, i):
    """Natural frequency of corner ``i``'s wheel on its spring and tyre [Hz]
    (0 for a rigid axle)."""
    k_s, _c_s, m_u, k_t, _c_t = _axle(p, i)
    if k_s <= 0.0 or m_u <= 0.0:
        return 0.0
    return math.sqrt((k_s + k_t) / m_u) / (2.0 * math.pi)
