"""Batched pullbacks of the fuzzer's random programs (fuzz/): for a fixed batch of seeds,
``pullback.batched(V)`` equals the stack of single pullbacks, whether the program's adjoint
batches or falls back. ``SRCAD_BATCH_FUZZ_N=500`` for a longer hunt."""
import copy
import os

import numpy as np
import pytest

import srcad
from fuzz.oracle import load
from fuzz.program import generate
from srcad.batching import batched_backward
from srcad.pytrees import is_node, leaves, rebuild

SEED = 20261124
N = int(os.environ.get("SRCAD_BATCH_FUZZ_N", 16))


def test_batched_pullbacks_of_random_programs(tmp_path):
    rng = np.random.default_rng(SEED)
    compared = batched = 0
    for seed in range(SEED, SEED + N):
        program = generate(seed)
        fn = load(program.source, tmp_path, program.entry)
        args = copy.deepcopy(program.args)
        try:
            y, pullback = srcad.vjp(fn, *args, wrt=program.wrt)
            parts = [rng.standard_normal((3,) + np.shape(leaf)) for leaf in leaves(y)]
            V = rebuild(y, parts) if is_node(y) else parts[0]
            rows = [pullback(rebuild(V, [p[i] for p in parts]) if is_node(y) else V[i]) for i in range(3)]
        except srcad.SrcadError:  # (some refusals come when the pullback runs: a list join carrying derivatives)
            continue  # a program srcad refuses: its refusal is tests/test_fuzz.py's business
        got = pullback.batched(V)
        expected = rebuild(rows[0], [np.stack([leaves(r)[k] for r in rows]) for k in range(len(leaves(rows[0])))])
        assert len(leaves(got)) == len(leaves(expected)), program.source
        for g, e in zip(leaves(got), leaves(expected)):
            assert np.shape(g) == np.shape(e), program.source
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=program.source)
        compared += 1
        made = srcad.differentiable(fn, wrt=program.wrt)
        bound, _ = made._bind(tuple(args), {})  # (a bound method's object in front, as a call binds it)
        batched += batched_backward(made._functions(bound)) is not None
    assert compared >= N // 2 and batched >= N // 5  # most programs run, and a good share of them batch
