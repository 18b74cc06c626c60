# SPDX-License-Identifier: MIT
"""armctl.batch's fast path: the 5-joint arm with the minimum-motion rule, block by block
in few numpy passes (arm5_min_motion; see armctl.batch for the liberties it takes).
"""

import math
import threading

import numpy as np

from armfw import kinematics, twolink
from armfw.kinematics import AXIS_EPS, LIMIT_EPS, UP, MIN_MOTION
from armfw.numeric import TWO_PI
from armfw.status import TOO_FAR, TOO_CLOSE, JOINT_LIMIT
from armctl.batch_general import fit_angles, general_ik
from armctl.batch_math import OWN_ATAN2, atan2, reach_bounds_squared, sin_cos, sum_of_squares

# The minimum-motion choice in masks: an invalid candidate costs COST_INVALID
# more, every valid cost is capped below it.
COST_CAP = 1e298
COST_INVALID = 1e300
# A current pose within this (rad) of zero keeps every cost far below COST_CAP.
CURRENT_SMALL = 1e100

# Most targets per block of arm5_min_motion. A block costs ~100 us of numpy
# call overhead (~120 ufunc calls) whatever its size, and its working arrays
# are ~50 rows of BLOCK float64 (4 MB): blocks of 2048 were 50 % slower than
# 8192-20000, which measured alike with warm caches; past ~10000 a first call
# after other work (cold caches) was up to twice as slow.
BLOCK = 10240

# |cos t2| between these: an arm within sin t2 < 5e-6 of stretched or folded
# (t2 moves ~5e-16 / sin t2 with an ulp of the wrist point, 1e-10 rad here),
# or past it within ~1e-5 (a reach margin is ~4e-6 in cos t2). arm5_min_motion
# answers those rows by the general path, whose sines are libm's as armfw's.
NEAR_END_LOW = 1.0 - 1.25e-11
NEAR_END_HIGH = 1.0 + 1e-5
# The sign bit of a float64, as an int64.
SIGN_BIT = np.int64(np.iinfo(np.int64).min)


class _Arm5Blocks:
    """The arrays arm5_min_motion works in, for blocks of exactly size targets:
    contiguous views of flat buffers (buffers: name -> array, made on first use
    for BLOCK targets) that the views of every size share. A ufunc call on
    contiguous rows runs as one loop; on the first n columns of wider rows it
    costs ~0.4 us more (~45 us a block) and slices cost a view each.

    The candidates' joint values are rows of one array, stored as armfw keeps
    them (a turned-base candidate keeps its pitch joints as solved facing the
    target: the angles are those negated, fitted against the negated limits):
    0 the base yaw facing the target, 1 turned half a turn, 2 and 3 joint 3's
    +gamma and -gamma (all four candidates' joint 3 is one of them), 4 and 5
    joint 2 facing up and down, 6 and 7 joint 4 facing up and down, then the
    turned candidates' joints 2 and 4 where a joint's limits are not
    symmetric (where they are, the stored values and their fit are the same
    rows). Rows 0-3 lie within [-pi, pi]; where joints 1 and 3 have limits
    inside (-pi, pi) no whole turn can bring those into them and only rows
    from turn_from on need the turn arithmetic.
    """

    YAW, BACK, J3, J2, J4 = 0, 1, 2, 4, 6

    def __init__(self, arm, size, per_row_current, buffers):
        def array(name, shape, dtype=float):
            count = math.prod(shape[:-1])
            flat = buffers.get(name)
            if flat is None:
                flat = buffers[name] = np.empty(count * BLOCK, dtype=dtype)
            return flat[:count * size].reshape(shape)

        lo = [a - LIMIT_EPS for a in arm.lo]
        hi = [a + LIMIT_EPS for a in arm.hi]
        self.j2_turned = self.J2 if lo[1] == -hi[1] else 8
        self.j4_turned = self.J4 if lo[3] == -hi[3] else 8 + 2 * (self.j2_turned != self.J2)
        self.symmetric = self.j2_turned == self.J2 and self.j4_turned == self.J4
        rows = [(lo[0], hi[0])] * 2 + [(lo[2], hi[2])] * 2 + [(lo[1], hi[1])] * 2 + [(lo[3], hi[3])] * 2
        if self.j2_turned != self.J2:
            rows += [(-hi[1], -lo[1])] * 2
        if self.j4_turned != self.J4:
            rows += [(-hi[3], -lo[3])] * 2
        half_turn = all(-np.pi < lo[i] and hi[i] < np.pi for i in (0, 2))
        # A joint spanning a whole turn: fit_angle keeps any angle inside as it
        # is, the floor rule might not (arm5_min_motion leaves it to the general path).
        self.floor_rule_holds = all(hi[i] - lo[i] < TWO_PI for i in range(4))
        self.turn_from = 4 if half_turn else 0
        k = len(rows)
        self.lo_rows = np.array([r[0] for r in rows])[:, None]
        self.hi_rows = np.array([r[1] for r in rows])[:, None]
        self.columns = array("columns", (2, size))          # z, pitch of the block
        # y and x of the block's four arctan2 (phi, yaw, gamma, beta).
        self.sides = array("sides", (2, 4, size))
        self.octants = array("octants", (2, 4, size), np.int8)     # atan2's
        self.geometry = array("geometry", (6, size))         # per-target intermediates
        # phi, a spare row, then the candidate values (fitted in place): the
        # arctan2 answers land in every other row, phi, the yaw (YAW), gamma
        # (J3) and beta (J2, the row q2 takes after).
        self.angles_and_stored = array("angles_and_stored", (2 + k, size))
        self.stored = self.angles_and_stored[2:]
        self.inside = array("inside", (k, size), bool)
        self.scratch = array("scratch", (k, size), bool)
        # Squared motion per joint and candidate; before that, the fit's whole turns.
        self.terms = array("terms", (max(12, k), size))
        self.cost = array("cost", (4, size))
        self.valid = array("valid", (4, size), bool)
        self.down_bits = array("down_bits", (size,), np.int64)
        self.flags = array("flags", (10, size), bool)
        self.current = array("current", (5, size)) if per_row_current else None


_workspaces = threading.local()


def _arm5_blocks(arm, per_row_current, size):
    """The arrays of arm5_min_motion for blocks of size targets, allocated once per
    thread and arm limits: a fresh block of memory costs a page fault per 4 KiB
    on first touch."""
    cache = getattr(_workspaces, "arm5", None)
    if cache is None:
        cache = _workspaces.arm5 = {}
    key = (tuple(arm.lo), tuple(arm.hi), per_row_current, BLOCK)
    entry = cache.get(key)
    if entry is None:
        if len(cache) > 8:
            cache.clear()
        entry = cache[key] = ({}, {})
    buffers, by_size = entry
    w = by_size.get(size)
    if w is None:
        if len(by_size) > 8:
            by_size.clear()
        w = by_size[size] = _Arm5Blocks(arm, size, per_row_current, buffers)
    return w


def arm5_min_motion(arm, targets, current):
    """ik() for arm5 with the minimum-motion rule, block by block in few numpy passes.

    The same answers as the general path (candidates, limit fits, costs summed
    in armfw's order, the first of equal costs wins), cheaper:
    - targets go through in blocks of BLOCK into arrays allocated once per
      thread, every ufunc writing into them (out=): no new array per stage,
      a block's working set (~4 MB) near a core's cache;
    - the pitch's sin and cos from one vectorised tan (sin_cos); the four
      arctan2 of a target in one call on a stacked (4, B) array, numpy's where
      it is vectorised (AVX-512), atan2 where numpy's calls libm per element;
    - one two-link solve is shared by the four candidates; the turned-base
      candidates are the facing ones negated (as the firmware stores them), so
      where a joint's limits are symmetric they share its limit fit too, and
      the joint-3 rows are +-gamma for all four;
    - all candidate angles are fitted at once, stacked as rows of one array:
      whole turns by n = floor((a - lo) / 2 pi), then a - 2 pi n compared with
      both limits (armfw.kinematics.fit_angle's answer, which also takes
      a - 2 pi n: the turn counts can differ only for an angle within rounding,
      ~1e-15 rad, of a limit plus whole turns);
    - the yaw term of the cost is shared by the candidates with the same yaw,
      the wrist roll is the current one on every candidate (its term is 0);
    - the choice is a tournament on costs (first of equals wins) and the
      chosen pose float masks times values and bit masks on the values'
      bits: arithmetic, no masked copies (a masked copy on unpredictable
      masks costs ~4 ns an element, a multiply ~0.2-0.4);
    - the reach verdicts on r^2 against exact squared bounds (no square
      root for them).
    Costs above COST_CAP (a current pose 1e149 rad away) tie.
    Returns None where the general path must answer: a joint spanning a whole
    turn (the angle of the floor rule need not be the one fit_angle keeps), a
    current roll a whole turn off (its cost term is not 0).
    """
    constant_current = current is not None and current.ndim == 1
    per_row_current = current is not None and not constant_current
    count = len(targets)
    # Blocks of equal size (a short last block would cost a block's overhead for little).
    blocks = max(1, math.ceil(count / BLOCK))
    size = max(1, math.ceil(count / blocks))
    if not _arm5_blocks(arm, per_row_current, size).floor_rule_holds:
        return None
    if current is None:
        roll_ok = _roll_fits(arm, 0.0)
    elif constant_current:
        roll_ok = _roll_fits(arm, float(current[4]))
    else:
        roll_ok = _roll_fits(arm, current[:, 4])
    if roll_ok is None:
        return None
    cur_small = current is None or current.size == 0 or bool(np.abs(current).max() < CURRENT_SMALL)
    status = np.empty(count, dtype=np.int8)
    elbow = np.empty(count, dtype=np.int8)
    # Joint-major: each block writes whole rows; the caller gets the (N, 5) view.
    q = np.empty((5, count))
    resolve = []        # rows of nearly stretched or folded arms, for the general path
    for start in range(0, count, size):
        stop = min(start + size, count)
        w = _arm5_blocks(arm, per_row_current, stop - start)
        if current is None:
            cur = None
        elif constant_current:
            cur = current
        else:
            cur = w.current
            np.copyto(cur, current[start:stop].T)
        ok = roll_ok[start:stop] if isinstance(roll_ok, np.ndarray) else roll_ok
        near_ends = _arm5_block(arm, w, targets[start:stop], cur, cur_small, ok,
                                status[start:stop], q[:, start:stop], elbow[start:stop])
        if near_ends is not None:
            resolve.append(near_ends + start)
    if resolve:
        rows = np.concatenate(resolve)
        sub_current = current if current is None or constant_current else current[rows]
        st, q_rows, el = general_ik(arm, MIN_MOTION, targets[rows], sub_current)
        status[rows] = st
        q[:, rows] = q_rows.T
        elbow[rows] = el
    return status, q.T, elbow


def _roll_fits(arm, roll):
    """Whether the wrist roll (scalar or array) lies inside its limits; None when some
    roll is out of them but a whole turn would fit it (the general path's case)."""
    lo = arm.lo[4] - LIMIT_EPS
    hi = arm.hi[4] + LIMIT_EPS
    if np.ndim(roll) == 0:
        inside = lo <= roll <= hi
        fits = kinematics.fit_angle(roll, arm.lo[4], arm.hi[4]) is not None
        return None if (fits and not inside) else inside
    inside = (roll >= lo) & (roll <= hi)
    if inside.all():
        return True
    fitted, fits = fit_angles(roll, arm.lo[4], arm.hi[4])
    return None if np.any(fits & ~inside) else inside


def _arm5_block(arm, w, targets, cur, cur_small, roll_ok, status, pose, elbow):
    """One block of arm5_min_motion: answers into status, pose (5, B) and elbow.
    cur_small: every current angle is below CURRENT_SMALL (no cost reaches COST_CAP)."""
    n = len(targets)
    # The four arctan2 of a target (phi, yaw, gamma, beta) in one stacked call:
    # their y in sides[0], their x in sides[1], row by row.
    sides = w.sides
    (wy, y, s2, s2_beta), (wx, x, c2, x_beta) = sides
    np.copyto(sides[:, 1], targets[:, 1::-1].T)
    z, pitch_in = cols = w.columns
    np.copyto(cols, targets[:, 2:].T)
    sp, cp, pitch, r, r2, tmp = w.geometry
    stored = w.stored
    yaw = stored[w.YAW]
    far, close, pair_ok, singular, turned, odd, solved, up_down, turned_down, key = w.flags
    scratch = w.scratch
    pitch_bounds = pitch_in.min(), pitch_in.max()
    sin_cos(pitch_in, sp, cp, tmp, pitch_bounds)
    # Whole turns off a pitch outside (-pi, pi] first, as armfw (inside, armfw keeps it as it is).
    if -np.pi < pitch_bounds[0] and pitch_bounds[1] <= np.pi:
        pitch = pitch_in
    else:
        np.copyto(pitch, pitch_in)
        wrap = (pitch <= -np.pi) | (pitch > np.pi)
        pitch[wrap] = np.arctan2(sp[wrap], cp[wrap])
    with np.errstate(over="ignore", invalid="ignore"):
        sum_of_squares(x, y, r, tmp)
        np.sqrt(r, out=r)
        # Wrist point in the arm's plane relative to J2 (armfw: x vertical, y horizontal).
        z -= arm.base
        cp *= arm.l3
        np.subtract(z, cp, out=wx)
        sp *= arm.l3
        np.subtract(r, sp, out=wy)
        # armfw.twolink.TwoLink.solve_pair, every step in its order.
        links = arm._links
        sum_of_squares(wx, wy, r2, tmp)
        # armfw's sqrt(r2) > far and sqrt(r2) < near, on r2 itself.
        beyond_far, below_near = reach_bounds_squared(links._far, links._near)
        np.greater(r2, beyond_far, out=far)
        np.less_equal(r2, below_near, out=close)
        np.subtract(r2, links._sum_sq, out=c2)
        c2 /= links._twice_l1_l2
        # A nearly stretched or folded arm: sin(t2) goes with the square root of
        # cos(t2)'s rounding, and the sines of the pitch from tan(pitch / 2),
        # an ulp off libm's, could move t2 by more than 1e-9 rad, the branch
        # chosen (t2 near 0 ties them) or the status across a reach margin.
        # Such rows go to the general path (libm's sines, as armfw).
        near_ends = w.inside[:2]
        np.abs(c2, out=tmp)
        np.greater(tmp, NEAR_END_LOW, out=near_ends[0])
        np.less(tmp, NEAR_END_HIGH, out=near_ends[1])
        near_ends[0] &= near_ends[1]
        near_ends = np.flatnonzero(near_ends[0]) if near_ends[0].any() else None
        np.clip(c2, -1.0, 1.0, out=c2)
        np.square(c2, out=s2)
        np.subtract(1.0, s2, out=s2)
        np.sqrt(s2, out=s2)
        np.copyto(s2_beta, s2)
        np.add(c2, links._l1_over_l2, out=x_beta)
        angles = w.angles_and_stored[0:8:2]       # phi, stored YAW, J3, J2 (see _Arm5Blocks)
        if OWN_ATAN2:
            atan2(sides[0], sides[1], angles, w.terms[:12].reshape(3, 4, n),
                   (w.inside[:4], w.inside[4:8], scratch[:4]), w.octants)
        else:
            np.arctan2(sides[0], sides[1], out=angles)
    phi, gamma, beta = angles[0], stored[w.J3], stored[w.J2]
    axis_yaw = r.min() < AXIS_EPS
    if axis_yaw:
        on_axis = r < AXIS_EPS
        yaw[on_axis] = 0.0 if cur is None else (cur[0] if cur.ndim == 1 else cur[0][on_axis])
    np.less(s2, twolink.SINGULAR_SIN, out=singular)
    np.logical_or(far, close, out=pair_ok)
    np.logical_not(pair_ok, out=pair_ok)

    # The candidates' joint values, as stored (see _Arm5Blocks).
    # The base turned half a turn: yaw - pi if yaw > 0 else yaw + pi, as
    # back_offset + yaw (back_offset -2 pi + pi, -pi exactly, or pi).
    back = stored[w.BACK]
    back_offset = sp
    np.greater(yaw, 0.0, out=turned)
    np.copyto(back_offset, turned)
    back_offset *= -TWO_PI
    back_offset += np.pi
    np.add(back_offset, yaw, out=back)
    np.negative(gamma, out=stored[w.J3 + 1])
    up2, down2 = stored[w.J2:w.J2 + 2]
    np.add(phi, beta, out=down2)
    np.subtract(phi, beta, out=up2)      # in beta's row: after down2
    # Joint 4, pitch - q2 - q3, both elbows at once (x - (-gamma) is x + gamma bit for bit).
    j4 = stored[w.J4:w.J4 + 2]
    np.subtract(pitch, stored[w.J2:w.J2 + 2], out=j4)
    j4 -= stored[w.J3:w.J3 + 2]
    if not w.symmetric:
        stored[w.j2_turned:w.j2_turned + 2] = stored[w.J2:w.J2 + 2]
        stored[w.j4_turned:w.j4_turned + 2] = stored[w.J4:w.J4 + 2]

    exact_yaw = None
    if axis_yaw and cur is not None and not (-np.pi <= yaw.min() and yaw.max() <= np.pi):
        # A current yaw more than half a turn off (a target on the base axis):
        # armfw's own fit arithmetic, right for any angle.
        exact_yaw = [fit_angles(stored[row], arm.lo[0], arm.hi[0]) for row in (w.YAW, w.BACK)]

    # Limit fits of every row at once, in place.
    first = w.turn_from
    turns = w.terms[first:len(stored)]
    np.subtract(stored[first:], w.lo_rows[first:], out=turns)
    turns *= 1.0 / TWO_PI
    np.floor(turns, out=turns)
    turns *= TWO_PI
    stored[first:] -= turns
    fitted = stored
    inside = w.inside
    np.greater_equal(fitted, w.lo_rows, out=inside)
    np.less_equal(fitted, w.hi_rows, out=scratch)
    inside &= scratch
    if exact_yaw is not None:
        for row, (angles, fits) in zip((w.YAW, w.BACK), exact_yaw):
            fitted[row] = angles
            inside[row] = fits

    # Which candidates are valid: 0, 1 facing up, down; 2, 3 turned up, down
    # (joint 3 of the turned ones: the facing candidate's of the other elbow).
    valid = w.valid
    j2t, j4t = w.j2_turned, w.j4_turned
    for side, yaw_row, j2, j3, j4 in ((0, w.YAW, w.J2, slice(w.J3, w.J3 + 2), w.J4),
                                      (1, w.BACK, j2t, slice(w.J3 + 1, w.J3 - 1, -1), j4t)):
        v = valid[2 * side:2 * side + 2]
        np.logical_and(inside[j2:j2 + 2], inside[yaw_row], out=v)
        v &= inside[j3]
        v &= inside[j4:j4 + 2]
        v &= pair_ok
        if roll_ok is not True:
            v &= roll_ok

    cost = w.cost
    invalid = scratch[:4]
    np.logical_not(valid, out=invalid)
    if cur is None:
        np.copyto(cost, invalid)
        cost *= COST_INVALID
    else:
        _arm5_costs(w, fitted, cur, cur_small, invalid, cost, n)

    # The cheapest valid candidate, the first of equals: a tournament.
    # Each side's pair in one call: rows (up_down, turned_down), (best_facing, best_turned).
    best = w.geometry[4:6]
    best_facing, best_turned = best
    np.less(cost[1::2], cost[0::2], out=w.flags[7:9])
    np.minimum(cost[0::2], cost[1::2], out=best)
    np.less(best_turned, best_facing, out=turned)
    np.minimum(best_facing, best_turned, out=best_facing)
    np.less(best_facing, COST_INVALID, out=solved)
    # Elbow down: the facing pair's winner, or the turned pair's where turned won.
    np.logical_xor(up_down, turned_down, out=odd)
    odd &= turned
    odd ^= up_down

    # The chosen pose, from masks: float masks times values (x * 1 + y * 0 is
    # x) and bit masks on the values' bits; no masked copies. The masks are
    # made once: a bool times a float array casts every element (~0.6 ns), a
    # float times a float costs ~0.2-0.4, an int64 bit operation ~0.2-0.3.
    f_turned, f_facing, f_down, f_up, sign, nan_or_zero = w.terms[:6]
    product = w.terms[6:12]
    np.copyto(f_turned, turned)
    down = w.down_bits          # every bit set where elbow down, 0 elsewhere
    np.negative(odd.view(np.int8), out=down)
    # 0 where solved, NaN elsewhere (0 / 1 is 0, 0 / 0 is NaN): added to every joint.
    np.copyto(nan_or_zero, solved)
    with np.errstate(invalid="ignore"):
        np.divide(0.0, nan_or_zero, out=nan_or_zero)
    # Rows 0-3 (yaw, back, +-gamma) kept as computed: no whole turn fits them.
    as_stored = w.turn_from == w.J2 and exact_yaw is None
    if as_stored:
        # back_offset + yaw where turned (the back row's sum), 0 + yaw elsewhere.
        np.multiply(f_turned, back_offset, out=pose[0])
        pose[0] += yaw
    else:
        np.subtract(1.0, f_turned, out=f_facing)
        np.multiply(f_facing, fitted[w.YAW], out=pose[0])
        np.multiply(f_turned, fitted[w.BACK], out=product[0])
        pose[0] += product[0]
    pose[0] += nan_or_zero
    # A turned candidate's joints 2 to 4 are its stored values negated (NaN where none).
    np.multiply(f_turned, -2.0, out=sign)
    sign += 1.0
    sign += nan_or_zero
    if w.symmetric:
        # Joints 2 and 4 together: the up row's bits, the down row's where down
        # (up ^ ((up ^ down) & mask)), negated where turned.
        pair = fitted[w.J2:w.J2 + 4].view(np.int64).reshape(2, 2, n)
        differ = product[0:2].view(np.int64)
        np.bitwise_xor(pair[:, 0], pair[:, 1], out=differ)
        differ &= down
        np.bitwise_xor(pair[:, 0], differ, out=pose[1:4:2].view(np.int64))
        pose[1:4:2] *= sign
    else:
        np.copyto(f_down, odd)
        np.subtract(1.0, f_down, out=f_up)
        weight = w.cost
        np.subtract(1.0, f_turned, out=f_facing)
        np.multiply(f_up, f_facing, out=weight[0])
        np.multiply(f_down, f_facing, out=weight[1])
        np.multiply(f_up, f_turned, out=weight[2])
        np.multiply(f_down, f_turned, out=weight[3])
        for joint, facing, turned_row in ((1, w.J2, j2t), (3, w.J4, j4t)):
            np.multiply(weight[0:2], fitted[facing:facing + 2], out=product[0:2])
            np.multiply(weight[2:4], fitted[turned_row:turned_row + 2], out=product[2:4])
            product[0:2] -= product[2:4]
            np.add(product[0], product[1], out=pose[joint])
            pose[joint] += nan_or_zero
    # Joint 3: +gamma's fit for facing up and turned down, -gamma's for the others.
    if as_stored:
        # gamma, its sign bit flipped where down (the -gamma row bit for bit),
        # times the sign of the turned ones (NaN where none).
        flip = product[0].view(np.int64)
        np.bitwise_and(down, SIGN_BIT, out=flip)
        np.bitwise_xor(fitted[w.J3].view(np.int64), flip, out=pose[2].view(np.int64))
        pose[2] *= sign
    else:
        f_minus = f_up
        np.logical_xor(odd, turned, out=key)
        np.copyto(f_minus, key)
        np.multiply(f_minus, fitted[w.J3 + 1], out=pose[2])
        np.subtract(1.0, f_minus, out=f_minus)
        np.multiply(f_minus, fitted[w.J3], out=product[0])
        pose[2] += product[0]
        pose[2] += nan_or_zero
    np.add(nan_or_zero, 0.0 if cur is None else cur[4], out=pose[4])

    # Status: the pair's verdict; JOINT_LIMIT where it solved but no candidate fits.
    code = np.int8      # bool times int8 stays int8: no pass through int64
    np.multiply(far, code(TOO_FAR), out=status)
    np.multiply(close, code(TOO_CLOSE), out=elbow)
    status += elbow
    np.logical_not(solved, out=scratch[0])
    scratch[0] &= pair_ok
    np.multiply(scratch[0], code(JOINT_LIMIT), out=elbow)
    status += elbow
    singular &= solved
    status += singular
    # Elbow: UP or DOWN (UP + 1) where solved, 0 elsewhere.
    np.add(odd, code(UP), out=elbow)
    elbow *= solved
    return near_ends


def _arm5_costs(w, fitted, cur, cur_small, invalid, cost, n):
    """The four candidates' squared motion from the current pose into cost (4, B),
    summed in armfw's order (yaw, joints 2, 3, 4; the roll's term is 0), plus
    COST_INVALID where invalid (bool (4, B)). A turned candidate's angle is
    minus its stored value: (-a - c)^2 is (a + c)^2 bit for bit."""
    t = w.terms
    j2t, j4t = w.j2_turned, w.j4_turned
    c = cur if cur.ndim == 2 else cur[:, None]
    np.subtract(fitted[0:2], c[0], out=t[0:2])
    np.subtract(fitted[w.J2:w.J2 + 2], c[1], out=t[2:4])
    np.add(fitted[j2t:j2t + 2], c[1], out=t[4:6])
    np.subtract(fitted[w.J3:w.J3 + 2], c[2], out=t[6:8])
    np.subtract(fitted[w.J4:w.J4 + 2], c[3], out=t[8:10])
    np.add(fitted[j4t:j4t + 2], c[3], out=t[10:12])
    with np.errstate(over="ignore"):
        np.square(t, out=t)
    by_side = cost.reshape(2, 2, n)
    if cur_small:
        # The penalty first (a bool made float by a copy, the cheapest cast):
        # 0 + yaw^2 is yaw^2, so a valid cost is summed as armfw's.
        np.copyto(cost, invalid)
        cost *= COST_INVALID
        by_side += t[0:2].reshape(2, 1, n)
        by_side += t[2:6].reshape(2, 2, n)
    else:
        np.add(t[2:6].reshape(2, 2, n), t[0:2].reshape(2, 1, n), out=by_side)
    cost[0:2] += t[6:8]
    cost[2:4] += t[7:5:-1]
    by_side += t[8:12].reshape(2, 2, n)
    if not cur_small:
        np.minimum(cost, COST_CAP, out=cost)
        penalty = t[:4]
        np.copyto(penalty, invalid)
        penalty *= COST_INVALID
        cost += penalty
