"""Compiled banded Cholesky factorisation and solves for the whole-sequence IK's normal equations.

Storage: the lower triangle of a symmetric N × N matrix with bandwidth u, column by column (LAPACK's lower band
layout, one row of the array per column): ``band[j, k] = A[j + k, j]`` for 0 ≤ k ≤ u, and zeros for k > u, so
``band`` is (N₄, u + 16) with N₄ = N rounded up to a multiple of 4 (columns past N are the identity's). The 16
zeros past the band let the factorisation read 16 consecutive rows of any column without bounds checks.
:func:`band_cholesky` overwrites it with L (A = L Lᵀ) in the same layout and fills ``inv_diag`` with 1 / L[i, i].

Why this layout: the IK's band is two frames wide (u = 58 for the G1's 29 coordinates per frame) and its factor
is dense inside the band (the acceleration penalty's fill-in): ~50,000 multiply-adds per frame. With each
column of L contiguous, four columns of L are computed at once, 16 rows at a time, as a sum over the earlier
columns m of (16 rows of column m) × (4 entries of row j of L): every multiply-add goes into one of 64
accumulators held in eight 8-wide registers, with no horizontal sums (the row-stored 4 × 4 tiles used before
spent as many instructions summing their 16 inner products across vector lanes as multiplying: 7.3-8.8 against
3.5-4.1 µs per frame on the same matrices, the IK's shape; LAPACK's ``dpbtrf``, 12.9-13.3). That packing is done by
LLVM's SLP vectorizer, which numba leaves off by default: importing this module switches it on for the process
(numba's ``SLP_VECTORIZE``), before any of these functions is compiled (numba's JIT, or the ahead-of-time build
in :mod:`retarget.ik.aot`). It only vectorises independent operations, so no result changes; without it the
panel runs scalar, three times slower than the tiles.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import config as numba_config

# Before anything here is compiled (see the module docstring); read by numba whenever it optimises a function.
# numba's config module creates its settings at run time, hence the ignore.
numba_config.SLP_VECTORIZE = 1  # type: ignore[attr-defined]
_CACHE = True
TILE = 4
"""Columns of L computed together (the diagonal block factored by hand)."""
PANEL_ROWS = 16
"""Rows of L computed together in :func:`_panel_dots` (also the zero padding past the band in each column)."""


@numba.njit(cache=_CACHE)
def band_storage(num_rows: int, bandwidth: int) -> tuple[int, int]:
    """Shape (N₄, u + 16) of the storage for an N × N matrix of bandwidth u (see the module docstring)."""
    return -(-num_rows // TILE) * TILE, bandwidth + PANEL_ROWS


@numba.njit(cache=_CACHE, fastmath={"contract"})
def _panel_dots(band, i0, j0, m0, S):
    """S[c, r] = Σ_m L[i0 + r, m] · L[j0 + c, m] over m0 ≤ m < j0, for r < 16, c < 4, with L in column
    storage (:func:`band_cholesky`). Each column m of L gives 16 consecutive rows and 4 scalars: 64 multiply-adds
    into 64 accumulators that stay in registers (LLVM's SLP vectorizer packs each column's 16 into two 8-wide
    registers), with no horizontal sums. Only `contract` (fused multiply-add), no reassociation: the sums run in
    the order of m, so the compiled and JIT versions agree bit for bit."""
    s00 = s01 = s02 = s03 = s04 = s05 = s06 = s07 = s08 = s09 = s0a = s0b = s0c = s0d = s0e = s0f = 0.0
    s10 = s11 = s12 = s13 = s14 = s15 = s16 = s17 = s18 = s19 = s1a = s1b = s1c = s1d = s1e = s1f = 0.0
    s20 = s21 = s22 = s23 = s24 = s25 = s26 = s27 = s28 = s29 = s2a = s2b = s2c = s2d = s2e = s2f = 0.0
    s30 = s31 = s32 = s33 = s34 = s35 = s36 = s37 = s38 = s39 = s3a = s3b = s3c = s3d = s3e = s3f = 0.0
    for m in range(m0, j0):
        column = band[m]
        a = column[i0 - m : i0 - m + 16]  # a view: constant indices into it need no bounds or sign checks
        b = column[j0 - m : j0 - m + 4]
        a0, a1, a2, a3, a4, a5, a6, a7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
        a8, a9, aa, ab, ac, ad, ae, af = a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]
        b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
        s00 += a0 * b0
        s01 += a1 * b0
        s02 += a2 * b0
        s03 += a3 * b0
        s04 += a4 * b0
        s05 += a5 * b0
        s06 += a6 * b0
        s07 += a7 * b0
        s08 += a8 * b0
        s09 += a9 * b0
        s0a += aa * b0
        s0b += ab * b0
        s0c += ac * b0
        s0d += ad * b0
        s0e += ae * b0
        s0f += af * b0
        s10 += a0 * b1
        s11 += a1 * b1
        s12 += a2 * b1
        s13 += a3 * b1
        s14 += a4 * b1
        s15 += a5 * b1
        s16 += a6 * b1
        s17 += a7 * b1
        s18 += a8 * b1
        s19 += a9 * b1
        s1a += aa * b1
        s1b += ab * b1
        s1c += ac * b1
        s1d += ad * b1
        s1e += ae * b1
        s1f += af * b1
        s20 += a0 * b2
        s21 += a1 * b2
        s22 += a2 * b2
        s23 += a3 * b2
        s24 += a4 * b2
        s25 += a5 * b2
        s26 += a6 * b2
        s27 += a7 * b2
        s28 += a8 * b2
        s29 += a9 * b2
        s2a += aa * b2
        s2b += ab * b2
        s2c += ac * b2
        s2d += ad * b2
        s2e += ae * b2
        s2f += af * b2
        s30 += a0 * b3
        s31 += a1 * b3
        s32 += a2 * b3
        s33 += a3 * b3
        s34 += a4 * b3
        s35 += a5 * b3
        s36 += a6 * b3
        s37 += a7 * b3
        s38 += a8 * b3
        s39 += a9 * b3
        s3a += aa * b3
        s3b += ab * b3
        s3c += ac * b3
        s3d += ad * b3
        s3e += ae * b3
        s3f += af * b3
    S[0, 0], S[0, 1], S[0, 2], S[0, 3], S[0, 4], S[0, 5], S[0, 6], S[0, 7] = s00, s01, s02, s03, s04, s05, s06, s07
    S[0, 8], S[0, 9], S[0, 10], S[0, 11], S[0, 12], S[0, 13], S[0, 14], S[0, 15] = (
        s08,
        s09,
        s0a,
        s0b,
        s0c,
        s0d,
        s0e,
        s0f,
    )
    S[1, 0], S[1, 1], S[1, 2], S[1, 3], S[1, 4], S[1, 5], S[1, 6], S[1, 7] = s10, s11, s12, s13, s14, s15, s16, s17
    S[1, 8], S[1, 9], S[1, 10], S[1, 11], S[1, 12], S[1, 13], S[1, 14], S[1, 15] = (
        s18,
        s19,
        s1a,
        s1b,
        s1c,
        s1d,
        s1e,
        s1f,
    )
    S[2, 0], S[2, 1], S[2, 2], S[2, 3], S[2, 4], S[2, 5], S[2, 6], S[2, 7] = s20, s21, s22, s23, s24, s25, s26, s27
    S[2, 8], S[2, 9], S[2, 10], S[2, 11], S[2, 12], S[2, 13], S[2, 14], S[2, 15] = (
        s28,
        s29,
        s2a,
        s2b,
        s2c,
        s2d,
        s2e,
        s2f,
    )
    S[3, 0], S[3, 1], S[3, 2], S[3, 3], S[3, 4], S[3, 5], S[3, 6], S[3, 7] = s30, s31, s32, s33, s34, s35, s36, s37
    S[3, 8], S[3, 9], S[3, 10], S[3, 11], S[3, 12], S[3, 13], S[3, 14], S[3, 15] = (
        s38,
        s39,
        s3a,
        s3b,
        s3c,
        s3d,
        s3e,
        s3f,
    )


@numba.njit(cache=_CACHE, fastmath=False)
def band_cholesky(band, inv_diag) -> bool:
    """Factor the symmetric positive definite matrix in `band` in place (see the module docstring) and set
    `inv_diag` (N₄,) to 1 / L[i, i]; False if it is not positive definite (then `band` is partly overwritten).

    Left-looking over blocks of 4 columns J = j0..j0 + 3: the rows i of the panel (j0 ≤ i ≤ j0 + 3 + u) get
    A[i, J] − Σ_{m < j0} L[i, m] L[J, m] (16 rows at a time, :func:`_panel_dots`), then the 4 × 4 diagonal block
    is factored and the rows below it solved against it: L[i, J] = (…) L[J, J]⁻ᵀ."""
    N4, u = band.shape[0], band.shape[1] - PANEL_ROWS
    S = np.empty((TILE, PANEL_ROWS))
    for j0 in range(0, N4, TILE):
        last = min(N4 - 1, j0 + TILE - 1 + u)  # the panel's last row with an entry in columns J
        for i0 in range(j0, last + 1, PANEL_ROWS):
            m0 = max(0, i0 - u)  # columns before m0 have no entry in rows i0..
            if m0 >= j0:
                break
            _panel_dots(band, i0, j0, m0, S)
            for c in range(TILE):
                column, s, first = band[j0 + c], S[c], i0 - (j0 + c)
                for k in range(max(0, first), min(u + 1, first + PANEL_ROWS, last + 1 - j0 - c)):
                    column[k] -= s[k - first]
        C0, C1, C2, C3 = band[j0], band[j0 + 1], band[j0 + 2], band[j0 + 3]
        # The diagonal block, column by column (L[j0 + r, j0 + c] is C_c[r − c]).
        v = C0[0]
        if not v > 0.0:
            return False
        d0 = np.sqrt(v)
        inv0 = 1.0 / d0
        l10, l20, l30 = C0[1] * inv0, C0[2] * inv0, C0[3] * inv0
        v = C1[0] - l10 * l10
        if not v > 0.0:
            return False
        d1 = np.sqrt(v)
        inv1 = 1.0 / d1
        l21, l31 = (C1[1] - l20 * l10) * inv1, (C1[2] - l30 * l10) * inv1
        v = C2[0] - l20 * l20 - l21 * l21
        if not v > 0.0:
            return False
        d2 = np.sqrt(v)
        inv2 = 1.0 / d2
        l32 = (C2[1] - l30 * l20 - l31 * l21) * inv2
        v = C3[0] - l30 * l30 - l31 * l31 - l32 * l32
        if not v > 0.0:
            return False
        d3 = np.sqrt(v)
        inv3 = 1.0 / d3
        C0[0], C0[1], C0[2], C0[3] = d0, l10, l20, l30
        C1[0], C1[1], C1[2] = d1, l21, l31
        C2[0], C2[1] = d2, l32
        C3[0] = d3
        inv_diag[j0], inv_diag[j0 + 1], inv_diag[j0 + 2], inv_diag[j0 + 3] = inv0, inv1, inv2, inv3
        # The rows below: forward substitution with the diagonal block, row by row.
        for i in range(j0 + TILE, last + 1):
            k = i - j0
            x0 = C0[k] * inv0
            x1 = (C1[k - 1] - x0 * l10) * inv1
            x2 = (C2[k - 2] - x0 * l20 - x1 * l21) * inv2
            x3 = (C3[k - 3] - x0 * l30 - x1 * l31 - x2 * l32) * inv3
            C0[k], C1[k - 1], C2[k - 2], C3[k - 3] = x0, x1, x2, x3
    return True


@numba.njit(cache=_CACHE, fastmath=False)
def _diagonal_forward(band, inv_diag, y, j0):
    """y[J] ← L[J, J]⁻¹ y[J] for J = j0..j0 + 3 (the diagonal block's forward substitution); returns y[J]."""
    C0, C1, C2 = band[j0], band[j0 + 1], band[j0 + 2]
    x0 = y[j0] * inv_diag[j0]
    x1 = (y[j0 + 1] - C0[1] * x0) * inv_diag[j0 + 1]
    x2 = (y[j0 + 2] - C0[2] * x0 - C1[1] * x1) * inv_diag[j0 + 2]
    x3 = (y[j0 + 3] - C0[3] * x0 - C1[2] * x1 - C2[1] * x2) * inv_diag[j0 + 3]
    y[j0], y[j0 + 1], y[j0 + 2], y[j0 + 3] = x0, x1, x2, x3
    return x0, x1, x2, x3


@numba.njit(cache=_CACHE, fastmath=False)
def _forward_block(band, inv_diag, y, j0):
    """Forward substitution for the four unknowns j0..j0 + 3 of y (N₄,) with the diagonal block of columns
    J = j0..j0 + 3, then y[i] −= L[i, J] y[J] for the rows i below it in the band: one pass over them for the
    four columns (four multiply-adds per load and store of y)."""
    N4, u = band.shape[0], band.shape[1] - PANEL_ROWS
    x0, x1, x2, x3 = _diagonal_forward(band, inv_diag, y, j0)
    # Rows j0 + 4 on, as views that start there (indices from 0 vectorise; rows past j0 + c + u read the zeros
    # past the band of column j0 + c).
    below = y[j0 + TILE : min(N4, j0 + TILE + u)]
    L0, L1, L2, L3 = band[j0, TILE:], band[j0 + 1, TILE - 1 :], band[j0 + 2, TILE - 2 :], band[j0 + 3, TILE - 3 :]
    for m in range(below.shape[0]):
        below[m] -= L0[m] * x0 + L1[m] * x1 + L2[m] * x2 + L3[m] * x3


@numba.njit(cache=_CACHE, fastmath=False)
def _forward_block_four(band, inv_diag, Y, r0, j0):
    """:func:`_forward_block` for rows r0..r0 + 3 of Y at once, sharing each load of L (the same arithmetic per
    row, so the same results); nothing to do while the four rows are zero there."""
    N4, u = band.shape[0], band.shape[1] - PANEL_ROWS
    Y0, Y1, Y2, Y3 = Y[r0], Y[r0 + 1], Y[r0 + 2], Y[r0 + 3]
    zero = True
    for c in range(TILE):
        zero = zero and Y0[j0 + c] == 0.0 and Y1[j0 + c] == 0.0 and Y2[j0 + c] == 0.0 and Y3[j0 + c] == 0.0
    if zero:
        return
    a0, a1, a2, a3 = _diagonal_forward(band, inv_diag, Y0, j0)
    b0, b1, b2, b3 = _diagonal_forward(band, inv_diag, Y1, j0)
    c0, c1, c2, c3 = _diagonal_forward(band, inv_diag, Y2, j0)
    d0, d1, d2, d3 = _diagonal_forward(band, inv_diag, Y3, j0)
    end = min(N4, j0 + TILE + u)
    B0, B1, B2, B3 = Y0[j0 + TILE : end], Y1[j0 + TILE : end], Y2[j0 + TILE : end], Y3[j0 + TILE : end]
    L0, L1, L2, L3 = band[j0, TILE:], band[j0 + 1, TILE - 1 :], band[j0 + 2, TILE - 2 :], band[j0 + 3, TILE - 3 :]
    for m in range(B0.shape[0]):
        l0, l1, l2, l3 = L0[m], L1[m], L2[m], L3[m]
        B0[m] -= l0 * a0 + l1 * a1 + l2 * a2 + l3 * a3
        B1[m] -= l0 * b0 + l1 * b1 + l2 * b2 + l3 * b3
        B2[m] -= l0 * c0 + l1 * c1 + l2 * c2 + l3 * c3
        B3[m] -= l0 * d0 + l1 * d1 + l2 * d2 + l3 * d3


@numba.njit(cache=_CACHE, fastmath=False)
def band_forward(band, inv_diag, b, start):
    """b (N₄,) ← L⁻¹ b in place, for b zero before index `start` (0: any b): four columns of L at a time, each
    block's solved unknowns removed from the later equations in one pass along the columns."""
    for j0 in range(TILE * (start // TILE), band.shape[0], TILE):
        _forward_block(band, inv_diag, b, j0)


@numba.njit(cache=_CACHE, fastmath=True)
def _four_column_dots(band, j0, b, end, S):
    """S[c] = Σ_i L[i, j0 + c] · b[i] over j0 + 4 ≤ i < end, for c < 4 (sharing the loads of b; reassociated so
    that it vectorises)."""
    below = b[j0 + TILE : end]
    L0, L1, L2, L3 = band[j0, TILE:], band[j0 + 1, TILE - 1 :], band[j0 + 2, TILE - 2 :], band[j0 + 3, TILE - 3 :]
    s0 = s1 = s2 = s3 = 0.0
    for m in range(below.shape[0]):
        v = below[m]
        s0 += L0[m] * v
        s1 += L1[m] * v
        s2 += L2[m] * v
        s3 += L3[m] * v
    S[0], S[1], S[2], S[3] = s0, s1, s2, s3


@numba.njit(cache=_CACHE, fastmath=False)
def band_backward(band, inv_diag, b):
    """b (N₄,) ← L⁻ᵀ b in place, four unknowns at a time from the last: their equations' sums over the
    later unknowns (four inner products along the columns of L), then the 4 × 4 diagonal block."""
    N4, u = band.shape[0], band.shape[1] - PANEL_ROWS
    S = np.empty(TILE)
    for j0 in range(N4 - TILE, -1, -TILE):
        C0, C1, C2 = band[j0], band[j0 + 1], band[j0 + 2]
        _four_column_dots(band, j0, b, min(N4, j0 + TILE + u), S)
        x3 = (b[j0 + 3] - S[3]) * inv_diag[j0 + 3]
        x2 = (b[j0 + 2] - S[2] - C2[1] * x3) * inv_diag[j0 + 2]
        x1 = (b[j0 + 1] - S[1] - C1[1] * x2 - C1[2] * x3) * inv_diag[j0 + 1]
        x0 = (b[j0] - S[0] - C0[1] * x1 - C0[2] * x2 - C0[3] * x3) * inv_diag[j0]
        b[j0], b[j0 + 1], b[j0 + 2], b[j0 + 3] = x0, x1, x2, x3


@numba.njit(cache=_CACHE, fastmath=False)
def band_forward_many(band, inv_diag, Y, start):
    """Each row of Y (k₄, N₄; k₄ a multiple of 4) ← L⁻¹ of itself in place, for rows zero before index `start`:
    what the low-rank correction for joints pinned at their limits needs (one right-hand side per pinned joint).
    Four columns of L and four rows of Y at a time (:func:`_forward_block_four`), each block of L loaded once
    for all rows; rows still zero there (unit vectors before their own index) skip the block."""
    for j0 in range(TILE * (start // TILE), band.shape[0], TILE):
        for r0 in range(0, Y.shape[0], TILE):
            _forward_block_four(band, inv_diag, Y, r0, j0)


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
    band = np.zeros((rows, width))
    for j in range(rows):
        if j >= N:
            band[j, 0] = 1.0
            continue
        length = min(bandwidth + 1, N - j)
        band[j, :length] = A[j : j + length, j]
    return band


def band_to_dense(band: np.ndarray, num_rows: int) -> np.ndarray:
    """The lower triangle stored in `band`, as a dense (N, N) matrix (for tests)."""
    u = band.shape[1] - PANEL_ROWS
    dense = np.zeros((num_rows, num_rows))
    for j in range(num_rows):
        length = min(u + 1, num_rows - j)
        dense[j : j + length, j] = band[j, :length]
    return dense
