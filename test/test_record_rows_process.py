"""The row writer process (acres_sim.record.rows_process): rows as the recorder
builds them in process, delivery by step, null delivery at close, whole files
when the parent dies, and its failures raised in the parent."""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from acres_sim.config import load_config
from acres_sim.core.ins import RESULT_SIZE
from acres_sim.pipeline.models import ins_model, site_georeference
from acres_sim.core.schedule import delivery_step
from acres_sim.core.truth import TRUTH_SIZE
from acres_sim.pipeline.rows import timed_row
from acres_sim.record.rows_process import RowProcess, RowProcessError, truth_row


def rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.fixture(scope='module')
def ins():
    config = load_config(rig='polaris')
    return ins_model(config, np.array([0.1, 0.0, 1.0]), None, site_georeference(config))


def blocks(n_blocks, rng, hz_step=1):
    """(k_end, ins_k, ins, truth_k, truth) of n_blocks blocks of 120 steps."""
    out = []
    for b in range(n_blocks):
        k = np.arange(b * 120, (b + 1) * 120, hz_step, dtype=np.int64)
        out.append((int((b + 1) * 120), k, rng.normal(size=(len(k), RESULT_SIZE)),
                    k[::2].copy(), rng.normal(size=(len(k[::2]), TRUTH_SIZE))))
    return out


def test_rows_as_in_process(tmp_path, ins):
    rng = np.random.default_rng(2)
    data = blocks(3, rng, hz_step=3)
    delay = 0.05
    from acres_sim.core.magnetometer import magnetometer_rows
    process = RowProcess([(str(tmp_path / 'ins.jsonl'), str(tmp_path / 'truth.jsonl'),
                           ins.row_spec, str(tmp_path / 'imu.jsonl'),
                           {'mag': (str(tmp_path / 'magnetometer.jsonl'), magnetometer_rows)})],
                         delay)
    expected_imu, expected_mag = [], []
    for k_end, ins_k, values, truth_k, truth in data:
        # IMU samples delivered in the block, the second and third with events at work
        k_sample = np.arange(k_end - 126, k_end - 6, dtype=np.int64)
        k_delivery = k_sample + 6
        imu = rng.normal(size=(len(k_sample), 6))
        names = [[] for _ in k_sample]
        names[1], names[2] = ['bias'], ['bias', 'cap']
        # and magnetometer samples (their rounded values, as the model's columns)
        field, true_field = rng.normal(size=(2, len(k_sample[::3]), 3)) * 1e-5
        mag = (k_sample[::3], k_delivery[::3], {'magnetic_field_flu_t': field,
                                                'truth.magnetic_field_flu_t': true_field})
        process.send_block(k_end, [(0, ins_k, values, truth_k, truth, None, None, None,
                                    (k_sample, k_delivery, imu, names if k_end > 120 else None),
                                    {'mag': mag})])
        expected_mag += [{'magnetic_field_flu_t': b, 'truth': {'magnetic_field_flu_t': tb},
                          'sample_time_s': k / 120, 'available_time_s': k / 120 + delay,
                          'delivery_time_s': kd / 120}
                         for k, kd, b, tb in zip(mag[0].tolist(), mag[1].tolist(),
                                                 field.tolist(), true_field.tolist())]
        for i, (k, kd, v) in enumerate(zip(k_sample.tolist(), k_delivery.tolist(),
                                           imu.tolist())):
            row = {'specific_force_flu_mps2': v[:3], 'angular_velocity_flu_radps': v[3:]}
            if k_end > 120 and names[i]:
                row['events'] = names[i]
            expected_imu.append({**row, 'sample_time_s': k / 120,
                                 'available_time_s': k / 120 + delay,
                                 'delivery_time_s': kd / 120})
    process.close()
    process.close()                                    # twice is fine
    assert rows(tmp_path / 'imu.jsonl') == expected_imu
    assert rows(tmp_path / 'magnetometer.jsonl') == expected_mag and len(expected_mag) == 120
    assert [list(row) for row in rows(tmp_path / 'imu.jsonl')[121:123]] == [
        ['specific_force_flu_mps2', 'angular_velocity_flu_radps', 'events', 'sample_time_s',
         'available_time_s', 'delivery_time_s']] * 2      # the keys in the recorder's order
    expected_ins, expected_truth = [], []
    for k_end, ins_k, values, truth_k, truth in data:
        by_step = {k: ins.row(o) for k, o in zip(ins_k.tolist(), values.tolist())}
        expected_truth += [truth_row(k, t, by_step.get(k))
                           for k, t in zip(truth_k.tolist(), truth.tolist())]
        for k, row in by_step.items():
            kd = delivery_step(k, delay, 120)
            if kd < 360:                    # delivered within the run: written
                expected_ins.append(timed_row(row, k, kd / 120, delay))
    assert rows(tmp_path / 'ins.jsonl') == expected_ins
    assert rows(tmp_path / 'truth.jsonl') == expected_truth
    assert len(expected_ins) < sum(len(ins_k) for _k, ins_k, *_ in data)   # some never due
    assert expected_truth[0]['ins_point']


def test_a_dead_child_is_raised_once_as_a_one_line_reason(tmp_path, ins):
    process = RowProcess([(None, str(tmp_path / 'truth.jsonl'), None, None, None)], 0.0)
    os.kill(process._process.pid, signal.SIGKILL)
    process._process.join(10)
    empty = np.zeros((0, RESULT_SIZE))
    with pytest.raises(RowProcessError, match='killed by SIGKILL') as err:
        for _ in range(3):
            process.send_block(120, [(0, np.zeros(0, dtype=np.int64), empty,
                                      np.zeros(1, dtype=np.int64), np.zeros((1, TRUTH_SIZE)))])
    assert 'SIGKILL' in err.value.reason
    process.close()                                    # already reported: no second raise


def test_an_error_in_the_child_comes_back_with_its_traceback(tmp_path):
    process = RowProcess([(None, str(tmp_path / 'truth.jsonl'), None, None, None)], 0.0)
    process.send_block(120, [(5, None, None, None, None)])      # no agent 5
    with pytest.raises(RowProcessError, match='IndexError') as err:
        process.close()
    assert err.value.reason.startswith('IndexError')


def test_files_are_whole_when_the_parent_is_killed(tmp_path):
    code = textwrap.dedent(f'''
        import os, signal
        import numpy as np
        from acres_sim.record.rows_process import RowProcess
        process = RowProcess([(None, {str(tmp_path / 'truth.jsonl')!r}, None, None, None)], 0.0)
        for b in range(30):
            k = np.arange(b * 120, (b + 1) * 120, dtype=np.int64)
            process.send_block((b + 1) * 120, [(0, k[:0], np.zeros((0, 48)), k,
                                                np.ones((120, 13)))])
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == -signal.SIGKILL
    for _ in range(100):                               # the orphan finishes the file
        text = (tmp_path / 'truth.jsonl').read_text()
        if text.count('\n') == 3600:
            break
        time.sleep(0.1)
    assert text.endswith('\n') and text.count('\n') == 3600
    assert [r['time_s'] for r in rows(tmp_path / 'truth.jsonl')] == [k / 120 for k in range(3600)]


def test_a_file_that_cannot_be_opened_fails_the_start_in_one_line(tmp_path):
    with pytest.raises(RowProcessError, match='while opening the files') as err:
        RowProcess([(None, str(tmp_path / 'no such folder' / 'truth.jsonl'), None, None, None)],
                   0.0)
    assert err.value.reason.startswith('FileNotFoundError')


def test_a_start_not_waited_for_raises_its_failure_once_waited_for(tmp_path):
    """wait=False only starts the child: wait_ready() raises what the start
    raises, and the process is then closed (a close after it is silent)."""
    process = RowProcess([(None, str(tmp_path / 'no such folder' / 'truth.jsonl'), None, None,
                           None)], 0.0, wait=False)
    with pytest.raises(RowProcessError, match='while opening the files'):
        process.wait_ready()
    assert process.closed and process._process.exitcode is not None
    process.close()
    with pytest.raises(RowProcessError, match='while opening the files'):
        process.send_block(0, [])                    # it stays failed


def test_a_start_not_waited_for_is_ready_for_rows(tmp_path):
    truth = tmp_path / 'truth.jsonl'
    process = RowProcess([(None, str(truth), None, None, None)], 0.0, wait=False)
    process.wait_ready()
    process.wait_ready()                             # once ready, at once
    process.close()
    assert truth.exists() and process._process.exitcode == 0


def test_the_parents_files_end_on_a_whole_line_when_it_is_killed(tmp_path):
    """A parent killed inside a write leaves part of a line in its own file;
    the row writer, which outlives it, cuts that part off."""
    gnss = tmp_path / 'gnss.jsonl'
    code = textwrap.dedent(f'''
        import os, signal
        from acres_sim.record.rows_process import RowProcess
        process = RowProcess([(None, {str(tmp_path / 'truth.jsonl')!r}, None, None, None)], 0.0,
                             tidy=[{str(gnss)!r}])
        with open({str(gnss)!r}, 'wb') as f:
            f.write(b'{{"k": 0}}\\n{{"k": 1}}\\n{{"k": 2, "pos')    # the kill, mid-line
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == -signal.SIGKILL
    for _ in range(300):                               # the orphan tidies up
        if gnss.read_bytes().endswith(b'\n'):
            break
        time.sleep(0.1)
    assert [r['k'] for r in rows(gnss)] == [0, 1]


def test_the_row_writer_process_loads_no_numba():
    """Its imports stay light (numba's LLVM alone is some 60 MB a process)."""
    import subprocess
    import sys

    code = ('import sys, acres_sim.record.rows_process; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'
