"""The compiled banded Cholesky (retarget.ik.banded) against numpy's dense factorisation and solves, on random
symmetric positive definite banded matrices of the IK's bandwidth and of others."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import cho_solve_banded, cholesky_banded

from retarget.ik.banded import (
    band_backward,
    band_cholesky,
    band_forward,
    band_forward_many,
    band_from_dense,
    band_solve,
    band_storage,
    band_to_dense,
    dense_cholesky_solve,
)


def _random_banded_spd(size: int, bandwidth: int, seed: int) -> np.ndarray:
    """A random SPD matrix with nonzeros only within `bandwidth` of the diagonal (condition ~1e3)."""
    rng = np.random.default_rng(seed)
    B = np.tril(np.triu(rng.normal(size=(size, size)), -bandwidth // 2), 0)
    A = B @ B.T  # bandwidth ≤ 2 · (bandwidth // 2)
    A[np.abs(np.subtract.outer(np.arange(size), np.arange(size))) > bandwidth] = 0.0
    return A + 1e-2 * np.eye(size) * np.abs(np.diag(A)).mean()


@pytest.mark.parametrize(("size", "bandwidth"), [(29 * 9, 58), (29 * 7 + 1, 58), (50, 5), (13, 12), (3, 8)])
def test_factor_and_solve_match_dense_numpy(size, bandwidth):
    A = _random_banded_spd(size, bandwidth, seed=size)
    band = band_from_dense(A, bandwidth)
    assert band.shape == band_storage(size, bandwidth)
    inv_diag = np.empty(band.shape[0])
    assert band_cholesky(band, inv_diag)
    L = band_to_dense(band, size)
    np.testing.assert_allclose(L, np.linalg.cholesky(A), atol=1e-10 * np.abs(L).max())
    np.testing.assert_allclose(inv_diag[:size], 1.0 / np.diag(L))
    # The zeros past the band (each column's next 16 entries) stay zero: the factorisation reads them as zeros.
    np.testing.assert_array_equal(band[:, bandwidth + 1 :], 0.0)
    padding = band[size:]
    np.testing.assert_array_equal(padding[:, 0], 1.0)
    np.testing.assert_array_equal(padding[:, 1:], 0.0)
    rng = np.random.default_rng(1)
    b = np.zeros(band.shape[0])
    b[:size] = rng.normal(size=size)
    expected = np.linalg.solve(A, b[:size])
    band_solve(band, inv_diag, b)
    assert np.abs(A @ b[:size] - A @ expected).max() < 1e-10 * np.abs(A).max() * np.abs(expected).max()
    np.testing.assert_allclose(b[size:], 0.0)


def test_agrees_with_lapack_on_the_ik_shape():
    """29 coordinates per frame, two frames of bandwidth: the factor LAPACK's dpbtrf computes."""
    size, bandwidth = 29 * 12, 58
    A = _random_banded_spd(size, bandwidth, seed=3)
    ab = np.zeros((bandwidth + 1, size))  # LAPACK upper storage: ab[u + i − j, j] = A[i, j]
    for j in range(size):
        i = np.arange(max(0, j - bandwidth), j + 1)
        ab[bandwidth + i - j, j] = A[i, j]
    factor = cholesky_banded(ab, lower=False)
    band = band_from_dense(A, bandwidth)
    inv_diag = np.empty(band.shape[0])
    assert band_cholesky(band, inv_diag)
    U = np.zeros((size, size))
    for j in range(size):
        i = np.arange(max(0, j - bandwidth), j + 1)
        U[i, j] = factor[bandwidth + i - j, j]
    np.testing.assert_allclose(band_to_dense(band, size), U.T, atol=1e-12 * np.abs(U).max())
    b = np.zeros(band.shape[0])
    b[:size] = np.arange(size) % 7 - 3.0
    lapack = cho_solve_banded((factor, False), b[:size])
    band_solve(band, inv_diag, b)
    np.testing.assert_allclose(b[:size], lapack, rtol=1e-10, atol=1e-12)


def test_forward_solve_from_a_start_index_equals_the_full_one():
    """A unit vector's forward solve may start at its index (everything before is zero)."""
    size, bandwidth = 29 * 5, 58
    A = _random_banded_spd(size, bandwidth, seed=9)
    band = band_from_dense(A, bandwidth)
    inv_diag = np.empty(band.shape[0])
    assert band_cholesky(band, inv_diag)
    L = band_to_dense(band, size)
    for start in (0, 37, size - 1):
        e = np.zeros(band.shape[0])
        e[start] = 1.0
        band_forward(band, inv_diag, e, start)
        unit = np.zeros(size)
        unit[start] = 1.0
        np.testing.assert_allclose(e[:size], np.linalg.solve(L, unit), atol=1e-12)
        band_backward(band, inv_diag, e)
        np.testing.assert_allclose(e[:size], np.linalg.solve(A, unit), atol=1e-10)


@pytest.mark.parametrize(("size", "bandwidth", "start"), [(29 * 6, 58, 37), (29 * 6 + 2, 58, 0), (41, 7, 13)])
def test_many_forward_solves_at_once_equal_one_at_a_time(size, bandwidth, start):
    """Several right-hand sides at once (the pinned joints' unit vectors), rows zero before `start`; rows that
    are zero throughout stay zero."""
    A = _random_banded_spd(size, bandwidth, seed=size + start)
    band = band_from_dense(A, bandwidth)
    inv_diag = np.empty(band.shape[0])
    assert band_cholesky(band, inv_diag)
    rng = np.random.default_rng(2)
    Y = np.zeros((8, band.shape[0]))
    Y[:6, start:size] = rng.normal(size=(6, size - start))  # two rows of padding stay zero
    expected = np.linalg.solve(band_to_dense(band, size), Y[:, :size].T).T
    band_forward_many(band, inv_diag, Y, start)
    np.testing.assert_allclose(Y[:, :size], expected, atol=1e-10 * np.abs(expected).max())
    np.testing.assert_array_equal(Y[6:], 0.0)


def test_indefinite_matrices_are_reported():
    A = _random_banded_spd(40, 6, seed=4)
    A[20, 20] = -1.0
    band = band_from_dense(A, 6)
    assert not band_cholesky(band, np.empty(band.shape[0]))
    M = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not dense_cholesky_solve(M, np.ones(2))


def test_small_dense_solve_matches_numpy():
    rng = np.random.default_rng(6)
    B = rng.normal(size=(9, 9))
    M = B @ B.T + np.eye(9)
    b = rng.normal(size=9)
    x = b.copy()
    assert dense_cholesky_solve(M.copy(), x)
    np.testing.assert_allclose(x, np.linalg.solve(M, b), rtol=1e-10)
