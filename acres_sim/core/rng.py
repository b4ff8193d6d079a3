"""PCG32 noise streams (spec: Seeds and Determinism).

Every random number the simulator draws comes from a PCG-XSH-RR generator
(O'Neill 2014, the ``pcg32`` of pcg-c-basic): 64 bits of state ``s``, an odd
64-bit increment ``c``, the LCG step ``s <- 6364136223846793005*s + c`` and a
32-bit output permuted from the state *before* the step.  Seeding is exactly
``pcg32_srandom_r(seed, seq)``, so the first outputs for (42, 54) are the ones
printed by the reference ``pcg32-demo``.

On top of the raw 32-bit outputs the spec defines two derived draws:

* uniform  ``U = (x + 0.5) / 2**32`` from one output ``x``; always strictly
  inside (0, 1) and exact in float64 (33 significant bits at most);
* Gaussian ``sqrt(-2 ln U1) * cos(2*pi*U2)``: Box-Muller, cosine branch only,
  U1 drawn before U2, nothing cached, so every Gaussian costs two outputs.

Layout.  A generator state is a ``numpy.uint64`` array of length 2,
``[state, inc]``.  The ``pcg32_*`` functions are numba kernels taking that
array and advancing it in place, so other njit code (sensor models) can draw
noise inside its own loops with the state passed in explicitly -- there is no
module-level or global generator anywhere.  :class:`Pcg32` is a thin Python
handle around one such array.

The stream table (:data:`STREAMS`) is the single place that says which seed
offset and PCG sequence each noise source uses and how it is shifted for
agent ``k`` of a multi-vehicle run.

numba typing note: numba promotes ``uint64 op int64`` to float64, and small
unsigned types to 64 bits.  Every constant below is therefore a ``np.uint64``
and the 32-bit rotation is done in uint64 with an explicit 32-bit mask.
Kernels are compiled lazily on first use and cached on disk (``cache=True``);
importing this module compiles nothing.
"""

from __future__ import annotations

import enum
import math
import operator
from typing import NamedTuple, Union

import numpy as np

from acres_sim.core.jit import njit

__all__ = [
    'AGENT_SEED_STRIDE',
    'AgentOffset',
    'GNSS_CONSTELLATION',
    'GNSS_ERRORS',
    'IMU',
    'INS',
    'PCG32_MULTIPLIER',
    'Pcg32',
    'STREAMS',
    'StreamSpec',
    'TERRAIN_ROUGHNESS',
    'make_stream',
    'pcg32_fill_gaussian',
    'pcg32_fill_u32',
    'pcg32_fill_uniform',
    'pcg32_gaussian',
    'pcg32_next_u32',
    'pcg32_output',
    'pcg32_seed',
    'pcg32_step',
    'pcg32_uniform',
    'stream_seed',
    'u32_to_uniform',
]

# ---------------------------------------------------------------------------
# Constants (all unsigned so numba keeps the arithmetic in uint64)
# ---------------------------------------------------------------------------

PCG32_MULTIPLIER = 6364136223846793005
_MASK64 = (1 << 64) - 1

_MULT = np.uint64(PCG32_MULTIPLIER)
_ONE = np.uint64(1)
_SH18 = np.uint64(18)
_SH27 = np.uint64(27)
_SH59 = np.uint64(59)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_MASK32 = np.uint64(0xFFFFFFFF)
_INV_2POW32 = 1.0 / 4294967296.0          # 2**-32, exact
_TWO_PI = 2.0 * math.pi


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

@njit(cache=True)
def pcg32_output(s):
    """XSH-RR output permutation of one 64-bit state value (no stepping).

    ``x = ((s >> 18) ^ s) >> 27`` truncated to 32 bits, rotated right by the
    top five bits ``s >> 59``.
    """
    s = np.uint64(s)
    x = (((s >> _SH18) ^ s) >> _SH27) & _MASK32
    r = s >> _SH59
    # Rotate right within 32 bits; (32 - r) & 31 makes r == 0 a no-op.
    rot = (x >> r) | (x << ((_U32 - r) & _U31))
    return np.uint32(rot & _MASK32)


@njit(cache=True)
def pcg32_step(st):
    """Advance the LCG once in place: ``s <- a*s + c (mod 2**64)``."""
    st[0] = st[0] * _MULT + st[1]


@njit(cache=True)
def pcg32_seed(seed, seq):
    """New ``[state, inc]`` array, seeded exactly like ``pcg32_srandom_r``."""
    st = np.empty(2, dtype=np.uint64)
    st[0] = np.uint64(0)
    st[1] = (np.uint64(seq) << _ONE) | _ONE
    pcg32_step(st)
    st[0] = st[0] + np.uint64(seed)
    pcg32_step(st)
    return st


@njit(cache=True)
def pcg32_next_u32(st):
    """Next 32-bit output; the output comes from the state before the step."""
    old = st[0]
    st[0] = old * _MULT + st[1]
    return pcg32_output(old)


@njit(cache=True)
def u32_to_uniform(x):
    """The spec's uniform map ``(x + 0.5) / 2**32``; lies in (0, 1) for any u32."""
    return (np.float64(x) + 0.5) * _INV_2POW32


@njit(cache=True)
def pcg32_uniform(st):
    """One uniform in (0, 1) from one output."""
    return u32_to_uniform(pcg32_next_u32(st))


@njit(cache=True)
def pcg32_gaussian(st):
    """One standard normal: Box-Muller cosine branch, U1 then U2."""
    u1 = pcg32_uniform(st)
    u2 = pcg32_uniform(st)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)


@njit(cache=True)
def pcg32_fill_u32(st, out):
    """Fill ``out`` (any integer array, 1-D) with consecutive raw outputs."""
    for i in range(out.shape[0]):
        out[i] = pcg32_next_u32(st)


@njit(cache=True)
def pcg32_fill_uniform(st, out):
    """Fill ``out`` (float64, 1-D) with consecutive uniforms."""
    for i in range(out.shape[0]):
        out[i] = pcg32_uniform(st)


@njit(cache=True)
def pcg32_fill_gaussian(st, out):
    """Fill ``out`` (float64, 1-D) with consecutive Gaussians (two outputs each)."""
    for i in range(out.shape[0]):
        out[i] = pcg32_gaussian(st)


# ---------------------------------------------------------------------------
# Python handle
# ---------------------------------------------------------------------------

def _u64(value) -> int:
    """An integer reduced mod 2**64 (rejects floats and other non-integers)."""
    return operator.index(value) & _MASK64


class Pcg32:
    """One PCG32 stream.

    ``state`` is the live ``uint64[2]`` array ``[state, inc]``; passing it to
    the ``pcg32_*`` kernels draws from (and advances) this same stream.
    Seeds and sequences are taken mod 2**64.
    """

    __slots__ = ('state',)

    def __init__(self, seed: int, seq: int) -> None:
        self.state = pcg32_seed(np.uint64(_u64(seed)), np.uint64(_u64(seq)))

    @classmethod
    def from_state(cls, state: int, inc: int) -> 'Pcg32':
        """A handle on an explicit raw ``(state, inc)`` pair (no seeding step).

        ``inc`` is used as given; PCG needs it odd for the full period.
        """
        obj = cls.__new__(cls)
        obj.state = np.array([_u64(state), _u64(inc)], dtype=np.uint64)
        return obj

    def copy(self) -> 'Pcg32':
        """An independent stream at the same position."""
        obj = Pcg32.__new__(Pcg32)
        obj.state = self.state.copy()
        return obj

    def next_u32(self) -> int:
        return int(pcg32_next_u32(self.state))

    def uniform(self) -> float:
        return float(pcg32_uniform(self.state))

    def gaussian(self) -> float:
        return float(pcg32_gaussian(self.state))

    def u32s(self, n: int) -> np.ndarray:
        out = np.empty(operator.index(n), dtype=np.uint32)
        pcg32_fill_u32(self.state, out)
        return out

    def uniforms(self, n: int) -> np.ndarray:
        out = np.empty(operator.index(n), dtype=np.float64)
        pcg32_fill_uniform(self.state, out)
        return out

    def gaussians(self, n: int) -> np.ndarray:
        out = np.empty(operator.index(n), dtype=np.float64)
        pcg32_fill_gaussian(self.state, out)
        return out

    def __repr__(self) -> str:
        return f'Pcg32.from_state({int(self.state[0])}, {int(self.state[1])})'


# ---------------------------------------------------------------------------
# Stream table (spec: Seeds and Determinism) -- the only copy in the code
# ---------------------------------------------------------------------------

AGENT_SEED_STRIDE = 7919
"""Seed shift per agent index ``k`` (``seed + 7919*k``)."""


class AgentOffset(enum.Enum):
    """When a stream's seed is shifted by ``AGENT_SEED_STRIDE * k``."""

    ALWAYS = 'always'        # every agent has its own stream
    IF_ALL = 'if_all'        # only when offset_all_streams is true
    NEVER = 'never'          # shared by all agents


class StreamSpec(NamedTuple):
    name: str
    seed_offset: int
    sequence: int
    agent_offset: AgentOffset


GNSS_ERRORS = StreamSpec('gnss_errors', 0, 1, AgentOffset.IF_ALL)
IMU = StreamSpec('imu', 1009, 2, AgentOffset.IF_ALL)
GNSS_CONSTELLATION = StreamSpec('gnss_constellation', 3027, 4, AgentOffset.NEVER)
INS = StreamSpec('ins', 5045, 6, AgentOffset.ALWAYS)
TERRAIN_ROUGHNESS = StreamSpec('terrain_roughness', 7063, 8, AgentOffset.NEVER)
"""The surface roughness of the ground, which every vehicle drives on (never shifted)."""

# acres_sim's further sensors (not in the spec): each its own stream, shifted per
# agent as the GNSS-error and IMU streams are.
BAROMETER = StreamSpec('barometer', 9091, 10, AgentOffset.IF_ALL)
MAGNETOMETER = StreamSpec('magnetometer', 11113, 12, AgentOffset.IF_ALL)
WHEEL_ODOMETRY = StreamSpec('wheel_odometry', 13147, 14, AgentOffset.IF_ALL)
RADAR = StreamSpec('radar', 15161, 16, AgentOffset.IF_ALL)
GNSS_HEADING = StreamSpec('gnss_heading', 17183, 18, AgentOffset.IF_ALL)

STREAMS = {s.name: s for s in (GNSS_ERRORS, IMU, GNSS_CONSTELLATION, INS, TERRAIN_ROUGHNESS,
                               BAROMETER, MAGNETOMETER, WHEEL_ODOMETRY, RADAR, GNSS_HEADING)}
"""Stream name -> :class:`StreamSpec`."""


def _spec(stream: Union[str, StreamSpec]) -> StreamSpec:
    if isinstance(stream, StreamSpec):
        return stream
    try:
        return STREAMS[stream]
    except KeyError:
        raise ValueError(
            f'unknown noise stream {stream!r}; known: {", ".join(STREAMS)}'
        ) from None


def stream_seed(seed: int, stream: Union[str, StreamSpec], agent_index: int = 0,
                offset_all_streams: bool = True) -> int:
    """The PCG seed (mod 2**64) of ``stream`` for agent ``agent_index``.

    ``offset_all_streams=False`` reproduces the original game, where all
    vehicles share the GNSS-error and IMU noise; the INS stream is always
    per-agent and the constellation and terrain-roughness streams never are.
    """
    spec = _spec(stream)
    k = operator.index(agent_index)
    if k < 0:
        raise ValueError(f'agent_index must be >= 0, got {k}')
    value = operator.index(seed) + spec.seed_offset
    if spec.agent_offset is AgentOffset.ALWAYS or (
            spec.agent_offset is AgentOffset.IF_ALL and offset_all_streams):
        value += AGENT_SEED_STRIDE * k
    return value & _MASK64


def make_stream(seed: int, stream: Union[str, StreamSpec], agent_index: int = 0,
                offset_all_streams: bool = True) -> Pcg32:
    """A fresh :class:`Pcg32` for ``stream`` (see :func:`stream_seed`)."""
    spec = _spec(stream)
    return Pcg32(stream_seed(seed, spec, agent_index, offset_all_streams),
                 spec.sequence)
