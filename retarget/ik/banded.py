"""Compiled banded Cholesky factorisation and solves for the whole-sequence IK's normal equations.

Storage: the lower triangle of a symmetric N × N matrix with bandwidth u, row by row in blocks of 4 rows
that share one column offset: ``band[i, j − base(i)] = A[i, j]`` with ``base(i) = 4 (i // 4) − U`` and
U = u rounded up to a multiple of 4, so ``band`` is (N₄, U + 4) with N₄ = N rounded up to a multiple of 4
(rows past N are the identity's). Entries outside the band are zeros. :func:`band_cholesky` overwrites it
with L (A = L Lᵀ) in the same layout and fills ``inv_diag`` with 1 / L[i, i].

Why not LAPACK's ``dpbtrf``: the IK's band is two frames wide (u = 58 for the G1's 29 coordinates per
frame) and its factor is dense inside the band (the acceleration penalty's fill-in), so the work is
~50,000 multiply-adds per frame in inner products of at most 60 terms. Computing them 4 rows × 4 columns at a
time (16 sums sharing each load, vectorised by the compiler) runs at about 1.2× LAPACK's rate for this shape,
needs no copy into LAPACK's column layout, and lets the whole Gauss-Newton iteration stay in compiled code
without importing ``scipy.linalg`` (0.16-0.21 s of start-up).
"""

from __future__ import annotations

import numba
import numpy as np

_CACHE = True
TILE = 4
"""Rows (and columns) computed together; rows of one tile share the column offset of their storage."""


@numba.njit(cache=_CACHE)
def band_storage(num_rows: int, bandwidth: int) -> tuple[int, int]:
    """Shape (N₄, U + 4) of the storage for an N × N matrix of bandwidth u (see the module docstring)."""
    padded_rows = -(-num_rows // TILE) * TILE
    return padded_rows, -(-bandwidth // TILE) * TILE + TILE


@numba.njit(cache=_CACHE, fastmath=True)
def _tile_dots(A, ra, oa, B, rb, ob, length, S):
    """S[r, s] = Σ_m A[ra + r, oa + m] · B[rb + s, ob + m] over m < length, for r, s < 4: sixteen inner
    products sharing their loads (reassociated so that the compiler vectorises them)."""
    s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = 0.0
    s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = 0.0
    A0, A1, A2, A3 = A[ra], A[ra + 1], A[ra + 2], A[ra + 3]
    B0, B1, B2, B3 = B[rb], B[rb + 1], B[rb + 2], B[rb + 3]
    for m in range(length):
        a0, a1, a2, a3 = A0[oa + m], A1[oa + m], A2[oa + m], A3[oa + m]
        b0, b1, b2, b3 = B0[ob + m], B1[ob + m], B2[ob + m], B3[ob + m]
        s00 += a0 * b0
        s01 += a0 * b1
        s02 += a0 * b2
        s03 += a0 * b3
        s10 += a1 * b0
        s11 += a1 * b1
        s12 += a1 * b2
        s13 += a1 * b3
        s20 += a2 * b0
        s21 += a2 * b1
        s22 += a2 * b2
        s23 += a2 * b3
        s30 += a3 * b0
        s31 += a3 * b1
        s32 += a3 * b2
        s33 += a3 * b3
    S[0, 0], S[0, 1], S[0, 2], S[0, 3] = s00, s01, s02, s03
    S[1, 0], S[1, 1], S[1, 2], S[1, 3] = s10, s11, s12, s13
    S[2, 0], S[2, 1], S[2, 2], S[2, 3] = s20, s21, s22, s23
    S[3, 0], S[3, 1], S[3, 2], S[3, 3] = s30, s31, s32, s33


@numba.njit(cache=_CACHE, fastmath=False)
def _tile_forward(X, r0, ox, S, band, j0, oc, inv_diag):
    """Forward substitution with the factored 4 × 4 diagonal tile of rows j0..j0 + 3 of L (stored from column
    `oc` of those rows): X[r0 + r, ox:ox + 4] ← (X[r0 + r, ox:ox + 4] − S[r]) L_JJ⁻ᵀ for r < 4. Shared by the
    factorisation (X = the band: the rows of a tile below) and the many-right-hand-side solve (X = Y)."""
    l10 = band[j0 + 1, oc]
    l20, l21 = band[j0 + 2, oc], band[j0 + 2, oc + 1]
    l30, l31, l32 = band[j0 + 3, oc], band[j0 + 3, oc + 1], band[j0 + 3, oc + 2]
    d0, d1, d2, d3 = inv_diag[j0], inv_diag[j0 + 1], inv_diag[j0 + 2], inv_diag[j0 + 3]
    for r in range(TILE):
        row = X[r0 + r]
        x0 = (row[ox] - S[r, 0]) * d0
        x1 = (row[ox + 1] - S[r, 1] - x0 * l10) * d1
        x2 = (row[ox + 2] - S[r, 2] - x0 * l20 - x1 * l21) * d2
        x3 = (row[ox + 3] - S[r, 3] - x0 * l30 - x1 * l31 - x2 * l32) * d3
        row[ox], row[ox + 1], row[ox + 2], row[ox + 3] = x0, x1, x2, x3


@numba.njit(cache=_CACHE, fastmath=False)
def band_cholesky(band, inv_diag) -> bool:
    """Factor the symmetric positive definite matrix in `band` in place (see the module docstring) and set
    `inv_diag` (N₄,) to 1 / L[i, i]; False if it is not positive definite (then `band` is partly overwritten).

    Left-looking over tiles of 4 × 4: for the rows of tile b and each column tile c ≤ b in the band,
    L[I, J] = (A[I, J] − Σ_{m < 4c} L[I, m] L[J, m]) L[J, J]⁻ᵀ, the diagonal tile by a 4 × 4 Cholesky."""
    U = band.shape[1] - TILE
    S = np.empty((TILE, TILE))
    for b in range(band.shape[0] // TILE):
        i0 = TILE * b
        base_b = i0 - U
        for c in range(max(0, b - U // TILE), b + 1):
            j0 = TILE * c
            base_c = j0 - U
            _tile_dots(band, i0, 0, band, j0, base_b - base_c, j0 - base_b, S)
            o = j0 - base_b  # column j0 in the storage of rows of tile b
            if c < b:
                _tile_forward(band, i0, o, S, band, j0, j0 - base_c, inv_diag)
            else:
                # Cholesky of the diagonal tile's Schur complement, lower triangle only.
                for r in range(TILE):
                    row = band[i0 + r]
                    for s in range(r + 1):
                        v = row[o + s] - S[r, s]
                        other = band[i0 + s]
                        for k in range(s):
                            v -= row[o + k] * other[o + k]
                        if s < r:
                            row[o + s] = v * inv_diag[i0 + s]
                        else:
                            if not v > 0.0:
                                return False
                            d = np.sqrt(v)
                            row[o + r] = d
                            inv_diag[i0 + r] = 1.0 / d
    return True


@numba.njit(cache=_CACHE, fastmath=True)
def _four_dots(band, rb, ob, y, oy, length, S):
    """S[s] = Σ_m band[rb + s, ob + m] · y[oy + m] over m < length, for s < 4 (sharing the loads of y)."""
    s0 = s1 = s2 = s3 = 0.0
    B0, B1, B2, B3 = band[rb], band[rb + 1], band[rb + 2], band[rb + 3]
    for m in range(length):
        v = y[oy + m]
        s0 += B0[ob + m] * v
        s1 += B1[ob + m] * v
        s2 += B2[ob + m] * v
        s3 += B3[ob + m] * v
    S[0], S[1], S[2], S[3] = s0, s1, s2, s3


@numba.njit(cache=_CACHE, fastmath=False)
def band_forward(band, inv_diag, b, start):
    """b (N₄,) ← L⁻¹ b in place, for b zero before index `start` (0: any b); four rows of L at a time."""
    U = band.shape[1] - TILE
    S = np.empty(TILE)
    for c in range(start // TILE, band.shape[0] // TILE):
        j0 = TILE * c
        base_c = j0 - U
        first = max(TILE * (start // TILE), base_c)
        _four_dots(band, j0, first - base_c, b, first, j0 - first, S)
        oc = j0 - base_c
        x0 = (b[j0] - S[0]) * inv_diag[j0]
        x1 = (b[j0 + 1] - S[1] - band[j0 + 1, oc] * x0) * inv_diag[j0 + 1]
        x2 = (b[j0 + 2] - S[2] - band[j0 + 2, oc] * x0 - band[j0 + 2, oc + 1] * x1) * inv_diag[j0 + 2]
        r3 = band[j0 + 3]
        x3 = (b[j0 + 3] - S[3] - r3[oc] * x0 - r3[oc + 1] * x1 - r3[oc + 2] * x2) * inv_diag[j0 + 3]
        b[j0], b[j0 + 1], b[j0 + 2], b[j0 + 3] = x0, x1, x2, x3


@numba.njit(cache=_CACHE, fastmath=False)
def band_backward(band, inv_diag, b):
    """b (N₄,) ← L⁻ᵀ b in place, four rows of L at a time: the 4 × 4 diagonal tile first, then one pass
    that removes those four unknowns from every earlier equation (contiguous in each row's storage)."""
    U = band.shape[1] - TILE
    for c in range(band.shape[0] // TILE - 1, -1, -1):
        j0 = TILE * c
        base_c = j0 - U
        oc = j0 - base_c
        R0, R1, R2, R3 = band[j0], band[j0 + 1], band[j0 + 2], band[j0 + 3]
        x3 = b[j0 + 3] * inv_diag[j0 + 3]
        x2 = (b[j0 + 2] - R3[oc + 2] * x3) * inv_diag[j0 + 2]
        x1 = (b[j0 + 1] - R2[oc + 1] * x2 - R3[oc + 1] * x3) * inv_diag[j0 + 1]
        x0 = (b[j0] - R1[oc] * x1 - R2[oc] * x2 - R3[oc] * x3) * inv_diag[j0]
        b[j0], b[j0 + 1], b[j0 + 2], b[j0 + 3] = x0, x1, x2, x3
        for m in range(max(0, base_c), j0):
            o = m - base_c
            b[m] -= R0[o] * x0 + R1[o] * x1 + R2[o] * x2 + R3[o] * x3


@numba.njit(cache=_CACHE, fastmath=False)
def band_forward_many(band, inv_diag, Y, start):
    """Each row of Y (k₄, N₄; k₄ a multiple of 4) ← L⁻¹ of itself in place, for rows zero before index `start`.

    The same 4 × 4 tiles as the factorisation (four right-hand sides against four rows of L at a time), so k
    solves run at the factorisation's rate rather than k times a scalar forward substitution's: what the
    low-rank correction for joints pinned at their limits needs (one right-hand side per pinned joint)."""
    U = band.shape[1] - TILE
    S = np.empty((TILE, TILE))
    for r0 in range(0, Y.shape[0], TILE):
        for c in range(start // TILE, band.shape[0] // TILE):
            j0 = TILE * c
            base_c = j0 - U
            first = max(TILE * (start // TILE), base_c)
            _tile_dots(Y, r0, first, band, j0, first - base_c, j0 - first, S)
            _tile_forward(Y, r0, j0, S, band, j0, j0 - base_c, inv_diag)


@numba.njit(cache=_CACHE, fastmath=False)
def band_solve(band, inv_diag, b):
    """b (N₄,) ← A⁻¹ b in place, with `band` factored by :func:`band_cholesky`."""
    band_forward(band, inv_diag, b, 0)
    band_backward(band, inv_diag, b)


@numba.njit(cache=_CACHE, fastmath=False)
def dense_cholesky_solve(M, b) -> bool:
    """b ← M⁻¹ b in place for a small dense symmetric positive definite M (overwritten by its factor);
    False if M is not positive definite."""
    k = M.shape[0]
    for i in range(k):
        for j in range(i + 1):
            s = M[i, j]
            for m in range(j):
                s -= M[i, m] * M[j, m]
            if i == j:
                if not s > 0.0:
                    return False
                M[i, i] = np.sqrt(s)
            else:
                M[i, j] = s / M[j, j]
    for i in range(k):
        s = b[i]
        for m in range(i):
            s -= M[i, m] * b[m]
        b[i] = s / M[i, i]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for m in range(i + 1, k):
            s -= M[m, i] * b[m]
        b[i] = s / M[i, i]
    return True


def band_from_dense(A: np.ndarray, bandwidth: int) -> np.ndarray:
    """The band storage of the lower triangle of dense A (N × N) with the given bandwidth (for tests)."""
    N = A.shape[0]
    rows, width = band_storage(N, bandwidth)
    U = width - TILE
    band = np.zeros((rows, width))
    for i in range(rows):
        base = TILE * (i // TILE) - U
        if i >= N:
            band[i, i - base] = 1.0
            continue
        first = max(0, i - bandwidth)
        band[i, first - base : i - base + 1] = A[i, first : i + 1]
    return band


def band_to_dense(band: np.ndarray, num_rows: int) -> np.ndarray:
    """The lower triangle stored in `band`, as a dense (N, N) matrix (for tests)."""
    U = band.shape[1] - TILE
    dense = np.zeros((num_rows, num_rows))
    for i in range(num_rows):
        base = TILE * (i // TILE) - U
        first = max(0, base)
        dense[i, first : i + 1] = band[i, first - base : i - base + 1]
    return dense
