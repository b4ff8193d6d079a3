"""Tests of acres_sim.core.rng against independent references.

References used (none of them is this module's own output echoed back):

* the published output of pcg-c-basic's ``pcg32-demo`` (seed 42, sequence 54)
  and the post-seeding state other ports test against;
* randomgen's ``PCG32`` (a separate C implementation), with its raw state set
  to what ``pcg32_srandom_r`` produces;
* a few-line pure-Python big-integer transcription of the spec below;
* sampling theory (standard errors) for the Gaussian moments.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
import randomgen  # a pinned test requirement: an independent PCG32 in C

from acres_sim.core import rng
from acres_sim.core.jit import Kernel
from acres_sim.core.rng import (
    AGENT_SEED_STRIDE, INS, STREAMS,
    AgentOffset, Pcg32, make_stream, pcg32_fill_gaussian, pcg32_fill_u32,
    pcg32_fill_uniform, pcg32_gaussian, pcg32_next_u32, pcg32_output,
    pcg32_seed, pcg32_uniform, stream_seed, u32_to_uniform,
)

M64 = (1 << 64) - 1
MULT = 6364136223846793005


# ---------------------------------------------------------------------------
# Pure-Python reference, written from the spec (Python ints, no numpy/numba)
# ---------------------------------------------------------------------------

def ref_srandom(seed, seq):
    """pcg32_srandom_r: returns (state, inc)."""
    inc = (2 * seq + 1) & M64
    s = (0 * MULT + inc) & M64
    s = (s + seed) & M64
    s = (s * MULT + inc) & M64
    return s, inc


def ref_output(s):
    x = (((s >> 18) ^ s) >> 27) & 0xFFFFFFFF
    r = s >> 59
    return ((x >> r) | (x << ((32 - r) % 32))) & 0xFFFFFFFF


def ref_outputs(state, inc, n):
    out = []
    for _ in range(n):
        out.append(ref_output(state))
        state = (state * MULT + inc) & M64
    return out, state


def ref_gaussian(x1, x2):
    u1 = (x1 + 0.5) / 2.0**32
    u2 = (x2 + 0.5) / 2.0**32
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def close_ulps(a, b, ulps=4):
    """|a - b| within a few ulps of max(|b|, 1) (libm vs LLVM freedom)."""
    return abs(a - b) <= ulps * math.ulp(max(abs(b), 1.0))


def state_tuple(p):
    return int(p.state[0]), int(p.state[1])


EDGE_SEEDS = [0, 1, 42, 12345, 2**32 - 1, 2**32, 2**63 - 1, 2**63,
              0xDEADBEEFCAFEBABE, 2**64 - 1]
EDGE_SEQS = [0, 1, 2, 54, 2**31, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]


# ---------------------------------------------------------------------------
# Published reference vector
# ---------------------------------------------------------------------------

DEMO_FIRST_SIX = [0xa15c02b7, 0x7b47f409, 0xba1d3330,
                  0x83d2f293, 0xbfa4784b, 0xcbed606e]


def test_demo_state_after_seeding():
    p = Pcg32(42, 54)
    assert state_tuple(p) == (1753877967969059832, 109)
    st_ = pcg32_seed(np.uint64(42), np.uint64(54))
    assert st_.dtype == np.uint64 and st_.shape == (2,)
    assert (int(st_[0]), int(st_[1])) == (1753877967969059832, 109)


def test_demo_first_six_outputs():
    p = Pcg32(42, 54)
    assert [p.next_u32() for _ in range(6)] == DEMO_FIRST_SIX
    st_ = pcg32_seed(np.uint64(42), np.uint64(54))
    assert [int(pcg32_next_u32(st_)) for _ in range(6)] == DEMO_FIRST_SIX
    assert Pcg32(42, 54).u32s(6).tolist() == DEMO_FIRST_SIX


def test_python_reference_reproduces_demo():
    # Guards the reference itself, so a wrong reference cannot mask a bug.
    s, inc = ref_srandom(42, 54)
    assert (s, inc) == (1753877967969059832, 109)
    assert ref_outputs(s, inc, 6)[0] == DEMO_FIRST_SIX


# ---------------------------------------------------------------------------
# Cross-check against randomgen's PCG32
# ---------------------------------------------------------------------------

def randomgen_pcg32(seed, seq):
    """randomgen PCG32 positioned exactly as pcg32_srandom_r(seed, seq) leaves it.

    randomgen's constructor runs the seed through SeedSequence (so
    ``PCG32(42, 54)`` is NOT the demo stream); its ``state`` setter however
    takes the raw LCG state and the raw (already odd) increment.
    """
    s, inc = ref_srandom(seed, seq)
    bg = randomgen.PCG32(0, 0)
    bg.state = {'bit_generator': 'PCG32', 'state': {'state': s, 'inc': inc}}
    return bg


def randomgen_u32(bg, n):
    # random_raw of PCG32 yields one 32-bit output per element (as uint64).
    return np.asarray(bg.random_raw(n), dtype=np.uint64).astype(np.uint32)


def test_randomgen_semantics_raw_state_and_old_state_output():
    bg = randomgen.PCG32(0, 0)
    s, inc = 0x0123456789ABCDEF, 0x2545F4914F6CDD1D
    bg.state = {'bit_generator': 'PCG32', 'state': {'state': s, 'inc': inc}}
    assert bg.state['state'] == {'state': s, 'inc': inc}   # stored verbatim
    first = int(bg.random_raw())
    assert first == ref_output(s)                         # from the OLD state
    assert bg.state['state']['state'] == (s * MULT + inc) & M64
    # ...and the demo stream through randomgen.
    assert randomgen_u32(randomgen_pcg32(42, 54), 6).tolist() == DEMO_FIRST_SIX


@pytest.mark.parametrize('seq', EDGE_SEQS)
@pytest.mark.parametrize('seed', EDGE_SEEDS)
def test_matches_randomgen_edge_table(seed, seq):
    expected = randomgen_u32(randomgen_pcg32(seed, seq), 1000)
    p = Pcg32(seed, seq)
    assert state_tuple(p) == ref_srandom(seed, seq)
    np.testing.assert_array_equal(p.u32s(1000), expected)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, M64), seq=st.integers(0, M64))
def test_matches_randomgen_hypothesis(seed, seq):
    expected = randomgen_u32(randomgen_pcg32(seed, seq), 1000)
    np.testing.assert_array_equal(Pcg32(seed, seq).u32s(1000), expected)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, M64), seq=st.integers(0, M64))
def test_matches_python_reference_hypothesis(seed, seq):
    s, inc = ref_srandom(seed, seq)
    expected, end_state = ref_outputs(s, inc, 200)
    p = Pcg32(seed, seq)
    assert p.u32s(200).tolist() == expected
    assert state_tuple(p) == (end_state, inc)


@pytest.mark.parametrize('name', sorted(STREAMS))
def test_make_stream_matches_randomgen(name):
    seed, k = 2**64 - 3000, 5       # wraps for every stream with an offset
    p = make_stream(seed, name, agent_index=k)
    spec = STREAMS[name]
    expected = randomgen_u32(
        randomgen_pcg32(stream_seed(seed, name, k), spec.sequence), 500)
    np.testing.assert_array_equal(p.u32s(500), expected)


# ---------------------------------------------------------------------------
# Uniforms
# ---------------------------------------------------------------------------

def crafted_state(output):
    """A state < 2**59 (rotation 0) whose XSH-RR output is ``output``."""
    t = output << 27                           # wanted (s ^ s >> 18), bits 27..58
    s = t ^ (t >> 18) ^ (t >> 36) ^ (t >> 54)  # invert the xorshift
    assert ref_output(s) == output
    return s


@pytest.mark.parametrize('x, expected', [(0, 2.0**-33),
                                         (2**32 - 1, 1.0 - 2.0**-33)])
def test_uniform_ends_through_kernel(x, expected):
    s = crafted_state(x)
    assert int(pcg32_output(np.uint64(s))) == x
    p = Pcg32.from_state(s, 1)
    assert p.copy().next_u32() == x
    u = p.uniform()
    assert u == expected
    assert 0.0 < u < 1.0
    st_ = np.array([s, 1], dtype=np.uint64)
    assert pcg32_uniform(st_) == expected
    assert u32_to_uniform(np.uint32(x)) == expected


def test_uniform_large_sample_inside_open_interval_and_formula():
    n = 1_000_000
    p = Pcg32(7, 11)
    raw = p.copy().u32s(n)
    u = p.uniforms(n)
    assert u.dtype == np.float64
    assert u.min() > 0.0 and u.max() < 1.0
    np.testing.assert_array_equal(u, (raw.astype(np.float64) + 0.5) / 2.0**32)
    # Mean within 5 standard errors of 1/2 (var of U(0,1) is 1/12).
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)


# ---------------------------------------------------------------------------
# Gaussians
# ---------------------------------------------------------------------------

def test_gaussian_moments():
    n = 1_000_000
    g = Pcg32(20240917, 3).gaussians(n)
    mean = g.mean()
    d = g - mean
    var = np.mean(d**2)
    skew = np.mean(d**3) / var**1.5
    exkurt = np.mean(d**4) / var**2 - 3.0
    # Large-sample standard errors for a normal parent distribution.
    assert abs(mean) < 5 * math.sqrt(1 / n)
    assert abs(var - 1.0) < 5 * math.sqrt(2 / n)
    assert abs(skew) < 5 * math.sqrt(6 / n)
    assert abs(exkurt) < 5 * math.sqrt(24 / n)


def test_gaussian_consumes_two_outputs_and_is_box_muller_cosine():
    p = Pcg32(99, 5)
    q = p.copy()
    for _ in range(1000):
        g = p.gaussian()
        x1, x2 = q.next_u32(), q.next_u32()
        assert state_tuple(p) == state_tuple(q)
        assert close_ulps(g, ref_gaussian(x1, x2))


def test_gaussian_fill_is_box_muller_cosine():
    n = 20_000
    p = Pcg32(3, 8)
    raw = p.copy().u32s(2 * n).tolist()
    g = p.gaussians(n)
    for i in range(n):
        assert close_ulps(g[i], ref_gaussian(raw[2 * i], raw[2 * i + 1]))


# ---------------------------------------------------------------------------
# Kernels vs class, fills vs scalar draws
# ---------------------------------------------------------------------------

def test_class_and_kernels_agree_interleaved():
    p = Pcg32(2**64 - 5, 2**63 + 17)
    st_ = pcg32_seed(np.uint64(2**64 - 5), np.uint64(2**63 + 17))
    np.testing.assert_array_equal(p.state, st_)
    for _ in range(300):
        assert p.next_u32() == int(pcg32_next_u32(st_))
        assert p.uniform() == pcg32_uniform(st_)
        assert p.gaussian() == pcg32_gaussian(st_)
    np.testing.assert_array_equal(p.state, st_)


@pytest.mark.parametrize('kind', ['u32', 'uniform', 'gaussian'])
def test_fill_equals_repeated_scalar_draws(kind):
    n = 2_000
    p = Pcg32(123456789, 42)
    q = p.copy()
    if kind == 'u32':
        out = np.empty(n, dtype=np.uint32)
        pcg32_fill_u32(p.state, out)
        expected = [q.next_u32() for _ in range(n)]
    elif kind == 'uniform':
        out = np.empty(n)
        pcg32_fill_uniform(p.state, out)
        expected = [q.uniform() for _ in range(n)]
    else:
        out = np.empty(n)
        pcg32_fill_gaussian(p.state, out)
        expected = [q.gaussian() for _ in range(n)]
    assert out.tolist() == expected
    assert state_tuple(p) == state_tuple(q)


def test_vectorised_methods_equal_fills_and_continue_stream():
    p, q = Pcg32(5, 6), Pcg32(5, 6)
    a = np.empty(10)
    pcg32_fill_uniform(q.state, a)
    np.testing.assert_array_equal(p.uniforms(10), a)
    b = np.empty(7)
    pcg32_fill_gaussian(q.state, b)
    np.testing.assert_array_equal(p.gaussians(7), b)
    assert p.next_u32() == q.next_u32()
    assert p.uniforms(0).shape == (0,)


def test_state_is_live_and_copy_independent():
    p = Pcg32(1, 2)
    before = state_tuple(p)
    c = p.copy()
    pcg32_fill_gaussian(p.state, np.empty(3))        # kernel advances p
    s, inc = before
    assert state_tuple(p) == ((ref_outputs(s, inc, 6)[1]), inc)
    assert state_tuple(c) == before                  # copy untouched
    assert c.u32s(6).tolist() == ref_outputs(s, inc, 6)[0]


def test_kernels_stay_unsigned():
    # A uint64/int64 mix would have been promoted to float64 by numba. The
    # types are numba's JIT's (a compiled kernel is compiled for the same).
    seed, next_u32 = (k.dispatcher() if isinstance(k, Kernel) else k
                      for k in (pcg32_seed, pcg32_next_u32))
    st_ = seed(np.uint64(1), np.uint64(1))
    x = next_u32(st_)
    assert isinstance(x, (int, np.integer)) and 0 <= int(x) < 2**32
    assert st_.dtype == np.uint64
    assert pcg32_seed(np.uint64(1), np.uint64(1)).dtype == np.uint64
    for sig in next_u32.signatures + seed.signatures:
        assert 'float' not in str(sig)
    res = next_u32.overloads[next_u32.signatures[0]].signature
    assert str(res.return_type) == 'uint32'


def test_seed_and_sequence_taken_mod_2_64():
    assert state_tuple(Pcg32(-1, 5)) == state_tuple(Pcg32(2**64 - 1, 5))
    assert state_tuple(Pcg32(2**64 + 7, 3)) == state_tuple(Pcg32(7, 3))
    assert state_tuple(Pcg32(7, 2**64 + 3)) == state_tuple(Pcg32(7, 3))
    assert state_tuple(Pcg32(np.uint64(7), np.int64(3))) == ref_srandom(7, 3)
    with pytest.raises(TypeError):
        Pcg32(1.5, 3)


def test_from_state_and_repr_roundtrip():
    p = Pcg32(8, 9)
    p.next_u32()
    q = eval(repr(p), {'Pcg32': Pcg32})
    assert state_tuple(q) == state_tuple(p)
    assert q.u32s(5).tolist() == p.u32s(5).tolist()


# ---------------------------------------------------------------------------
# Stream table
# ---------------------------------------------------------------------------

def test_stream_table_values():
    assert AGENT_SEED_STRIDE == 7919
    table = {name: (s.seed_offset, s.sequence, s.agent_offset)
             for name, s in STREAMS.items()}
    assert table == {
        'gnss_errors': (0, 1, AgentOffset.IF_ALL),
        'imu': (1009, 2, AgentOffset.IF_ALL),
        'gnss_constellation': (3027, 4, AgentOffset.NEVER),
        'ins': (5045, 6, AgentOffset.ALWAYS),
        'terrain_roughness': (7063, 8, AgentOffset.NEVER),
        'barometer': (9091, 10, AgentOffset.IF_ALL),
        'magnetometer': (11113, 12, AgentOffset.IF_ALL),
        'wheel_odometry': (13147, 14, AgentOffset.IF_ALL),
        'radar': (15161, 16, AgentOffset.IF_ALL),
        'gnss_heading': (17183, 18, AgentOffset.IF_ALL),
    }
    sequences = [s.sequence for s in STREAMS.values()]
    assert len(set(sequences)) == len(sequences), 'two streams share a sequence'


@pytest.mark.parametrize('offset_all, k, expected', [
    # agent 0: plain offsets
    (True, 0, {'gnss_errors': 1000, 'imu': 2009,
               'gnss_constellation': 4027, 'ins': 6045,
               'terrain_roughness': 8063,
                'barometer': 10091, 'magnetometer': 12113, 'wheel_odometry': 14147,
                'radar': 16161, 'gnss_heading': 18183}),
    (False, 0, {'gnss_errors': 1000, 'imu': 2009,
                'gnss_constellation': 4027, 'ins': 6045,
                'terrain_roughness': 8063,
                'barometer': 10091, 'magnetometer': 12113, 'wheel_odometry': 14147,
                'radar': 16161, 'gnss_heading': 18183}),
    # agent 3, default: everything but the sky and the ground moves by 3 * 7919 = 23757
    (True, 3, {'gnss_errors': 24757, 'imu': 25766,
               'gnss_constellation': 4027, 'ins': 29802,
               'terrain_roughness': 8063,
                'barometer': 33848, 'magnetometer': 35870, 'wheel_odometry': 37904,
                'radar': 39918, 'gnss_heading': 41940}),
    # agent 3, original game: only INS moves
    (False, 3, {'gnss_errors': 1000, 'imu': 2009,
                'gnss_constellation': 4027, 'ins': 29802,
                'terrain_roughness': 8063,
                'barometer': 10091, 'magnetometer': 12113, 'wheel_odometry': 14147,
                'radar': 16161, 'gnss_heading': 18183}),
])
def test_stream_seeds_per_agent(offset_all, k, expected):
    got = {name: stream_seed(1000, name, k, offset_all) for name in STREAMS}
    assert got == expected
    # StreamSpec objects work as well as names.
    assert stream_seed(1000, INS, k, offset_all) == expected['ins']


def test_offset_all_streams_defaults_to_true():
    assert stream_seed(1000, 'imu', 2) == 1000 + 1009 + 2 * 7919
    a = make_stream(1000, 'imu', 2)
    b = make_stream(1000, 'imu', 2, offset_all_streams=True)
    assert state_tuple(a) == state_tuple(b)


def test_stream_seed_wraps_mod_2_64():
    assert stream_seed(2**64 - 1, 'imu') == 1008
    assert stream_seed(2**64 - 7919, 'gnss_errors', 1) == 0
    assert stream_seed(2**64 - 5045, 'ins') == 0
    assert stream_seed(2**64 - 1, 'gnss_constellation', 10**6) == 3026
    assert stream_seed(-1, 'gnss_errors') == 2**64 - 1
    assert stream_seed(2**64 + 5, 'gnss_errors') == 5


def test_make_stream_seeds_and_sequences():
    seed, k = 77, 4
    for name, spec in STREAMS.items():
        p = make_stream(seed, name, agent_index=k)
        assert state_tuple(p) == ref_srandom(stream_seed(seed, name, k),
                                             spec.sequence)
    # Explicit numbers, independent of stream_seed:
    assert state_tuple(make_stream(77, 'ins', 4)) == ref_srandom(
        77 + 5045 + 4 * 7919, 6)
    assert state_tuple(make_stream(77, 'gnss_constellation', 4)) == \
        ref_srandom(77 + 3027, 4)
    assert state_tuple(make_stream(77, 'gnss_errors', 4, False)) == \
        ref_srandom(77, 1)


def test_agents_share_sky_and_never_share_ins():
    seed = 31337
    sky = [make_stream(seed, 'gnss_constellation', k).u32s(16).tolist()
           for k in range(4)]
    assert all(s == sky[0] for s in sky)
    for offset_all in (True, False):
        ins = {tuple(make_stream(seed, 'ins', k, offset_all).u32s(16))
               for k in range(4)}
        assert len(ins) == 4
    shared = {tuple(make_stream(seed, 'gnss_errors', k, False).u32s(16))
              for k in range(4)}
    assert len(shared) == 1
    own = {tuple(make_stream(seed, 'gnss_errors', k).u32s(16))
           for k in range(4)}
    assert len(own) == 4


def test_stream_argument_errors():
    with pytest.raises(ValueError):
        stream_seed(0, 'lidar')
    with pytest.raises(ValueError):
        make_stream(0, 'ins', agent_index=-1)
    with pytest.raises(TypeError):
        stream_seed(0.5, 'ins')


def test_module_has_no_global_generator():
    # Only the module's own objects; no RNG instance or state array at
    # module level that kernels could share by accident.
    for name, value in vars(rng).items():
        assert not isinstance(value, (Pcg32, np.ndarray)), name
