"""The INS epoch's results as one float64 row, and the ins.jsonl row built from
it (spec: INS, Outputs).  Plain Python, no numba: the recorder's row writer
process imports this and nothing heavier.  :mod:`acres_sim.core.ins` computes
the results (its kernel fills this layout) and re-exports these names.
"""

import math

__all__ = ['FIX_SERVICE', 'FIX_STATUS', 'FRAME_ID', 'RESULT_SIZE', 'ins_row']

FRAME_ID = 'oxts_link'
FIX_STATUS = 2          # sensor_msgs/NavSatStatus: GBAS fix (RTK)
FIX_SERVICE = 1         # sensor_msgs/NavSatStatus: GPS

# Layout of the epoch's results (one float64 array, index by index).
P_INS = 0           # 0:3   p_ins, grid ENU [m]
Q_INS = 3           # 3:7   q_ins, FLU -> ENU, xyzw
V_INS = 7           # 7:10  velocity, FLU [m/s]
W_INS = 10          # 10:13 angular rate, FLU [rad/s]
F_INS = 13          # 13:16 specific force, FLU [m/s^2]
LLH = 16            # 16:19 latitude [rad], longitude [rad], ellipsoidal height [m]
UTM = 19            # 19:22 E, N [m], h [m]
ALPHA = 22          # 22    grid rotation at p_ins [rad]
Q_UTM = 23          # 23:27 q_utm, xyzw
P_N = 27            # 27:30 truth: p_n, grid ENU [m]
Q_TRUE = 30         # 30:34 truth: q_true, xyzw
V_N_FLU = 34        # 34:37 truth: R^T v_n [m/s]
W_FLU = 37          # 37:40 truth: R^T w [rad/s]
UTM_TRUE = 40       # 40:43 truth: E, N, h of p_n
ALPHA_TRUE = 43     # 43    truth: grid rotation at p_n [rad]
Q_UTM_TRUE = 44     # 44:48 truth: q_z(-alpha_true) (x) q_true
RESULT_SIZE = 48


def ins_row(o: list, datum: str, position_variance, pose_variance) -> dict:
    """The ins.jsonl row of an epoch's results ``o`` (a list in the RESULT_SIZE
    layout): ``datum`` the fix's frame name, the fix's 3 and the odometry's 6
    variances."""
    velocity = o[V_INS:V_INS + 3]
    rate = o[W_INS:W_INS + 3]
    utm = o[UTM:UTM + 3]
    return {
        'frame_id': FRAME_ID,
        'fix': {'latitude_deg': math.degrees(o[LLH]),
                'longitude_deg': math.degrees(o[LLH + 1]),
                'altitude_m': o[LLH + 2], 'datum': datum,
                'status': FIX_STATUS, 'service': FIX_SERVICE,
                'position_covariance': list(position_variance)},
        'imu': {'orientation_enu_xyzw': o[Q_INS:Q_INS + 4],
                'angular_velocity_flu_radps': rate,
                'linear_acceleration_flu_mps2': o[F_INS:F_INS + 3]},
        'velocity': {'linear_flu_mps': velocity, 'angular_flu_radps': list(rate)},
        'position_enu_m': o[P_INS:P_INS + 3],
        'odom': {'frame_id': 'utm', 'child_frame_id': 'base_footprint',
                 'position_m': utm, 'orientation_xyzw': o[Q_UTM:Q_UTM + 4],
                 'linear_flu_mps': list(velocity), 'angular_flu_radps': list(rate),
                 'grid_rotation_deg': math.degrees(o[ALPHA]),
                 'covariance': list(pose_variance)},
        'truth': {'position_enu_m': o[P_N:P_N + 3],
                  'orientation_enu_xyzw': o[Q_TRUE:Q_TRUE + 4],
                  'position_utm_m': o[UTM_TRUE:UTM_TRUE + 3],
                  'orientation_utm_xyzw': o[Q_UTM_TRUE:Q_UTM_TRUE + 4],
                  'grid_rotation_deg': math.degrees(o[ALPHA_TRUE]),
                  'linear_flu_mps': o[V_N_FLU:V_N_FLU + 3],
                  'angular_flu_radps': o[W_FLU:W_FLU + 3]},
    }
