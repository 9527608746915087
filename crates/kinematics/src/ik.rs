//! Inverse kinematics of one chain: damped least squares (Levenberg-Marquardt) towards a
//! target in FRAME_TORSO, NAOqi's axis mask, clamped to the joints' limits, restarted from
//! a few fixed starting points when the first run stalls. Allocates: not for the RT thread.

use crate::model::{Chain, Model};
use crate::pose::Pose;
use crate::transform::{cross, mul, norm, rotate, rotation_vector, sub, transpose, Transform};

/// NAOqi's axis mask bits: 1 x, 2 y, 4 z, 8 wx, 16 wy, 32 wz.
pub const AXIS_MASK_POSITION: u8 = 7;
pub const AXIS_MASK_ALL: u8 = 63;

/// A chain end within this distance (m) and this angle (rad) of the target reached it.
pub const REACHED_POSITION: f64 = 1e-3;
pub const REACHED_ROTATION: f64 = 1e-2;

/// Metres per radian: how much a rotation error weighs against a position error.
const ROTATION_WEIGHT: f64 = 0.1;
/// Converged: no joint moves the error by more than this.
const CONVERGED_POSITION: f64 = 1e-6;
const CONVERGED_ROTATION: f64 = 1e-5;
const ITERATIONS: usize = 200;
/// Largest step asked of one iteration: a linearisation holds only so far.
const MAX_STEP_POSITION: f64 = 0.03;
const MAX_STEP_ROTATION: f64 = 0.3;
/// Fractions of each joint's range the restarts begin from, after `start` itself.
const RESTARTS: [f64; 4] = [0.5, 0.25, 0.75, 0.1];

/// The solved chain: its joint angles (`Model::chain_joints` order) and what error remains.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub angles: Vec<f64>,
    /// Distance (m) from the target over the masked position axes.
    pub position_error: f64,
    /// Angle (rad) from the target over the masked rotation axes.
    pub rotation_error: f64,
    /// Within `REACHED_POSITION` and `REACHED_ROTATION` of the target.
    pub reached: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum IkError {
    #[error("axis mask {0} selects no axis (1 x, 2 y, 4 z, 8 wx, 16 wy, 32 wz)")]
    EmptyAxisMask(u8),
    #[error("{given} start angles for a model of {expected} joints")]
    StartLength { given: usize, expected: usize },
    #[error("{given} limits for a model of {expected} joints")]
    LimitsLength { given: usize, expected: usize },
    #[error("the target or a start angle is not finite")]
    NotFinite,
}

/// Inverse kinematics of `chain` towards `target` (its end's frame in FRAME_TORSO) with
/// NAOqi's `axis_mask`, from `start` (model order, all joints), within `limits` (model
/// order, (min, max) per joint). Deterministic. When the target is out of reach, the
/// nearest solution found, within limits, with `reached` false.
pub fn solve(
    model: &Model,
    chain: Chain,
    target: &Transform,
    axis_mask: u8,
    start: &[f64],
    limits: &[(f64, f64)],
) -> Result<Solution, IkError> {
    let joints = model.joint_names().len();
    if axis_mask & AXIS_MASK_ALL == 0 {
        return Err(IkError::EmptyAxisMask(axis_mask));
    }
    if start.len() != joints {
        return Err(IkError::StartLength { given: start.len(), expected: joints });
    }
    if limits.len() != joints {
        return Err(IkError::LimitsLength { given: limits.len(), expected: joints });
    }
    let finite = target.translation.iter().chain(target.rotation.iter().flatten()).all(|v| v.is_finite());
    if !finite || start.iter().any(|v| !v.is_finite()) {
        return Err(IkError::NotFinite);
    }
    let mut solver = Solver { model, chain, target, axis_mask, limits, pose: Pose::new(model) };
    let mut best: Option<(Vec<f64>, Residual)> = None;
    let starts = std::iter::once(None).chain(RESTARTS.iter().map(Some));
    for fraction in starts {
        let mut angles = start.to_vec();
        if let Some(fraction) = fraction {
            for &joint in model.chain_joints(chain) {
                let (min, max) = limits[joint];
                angles[joint] = min + (max - min) * fraction;
            }
        }
        let residual = solver.descend(&mut angles);
        if best.as_ref().is_none_or(|(_, best)| residual.cost < best.cost) {
            best = Some((angles, residual));
        }
        if best.as_ref().is_some_and(|(_, best)| best.reached()) {
            break;
        }
    }
    let (angles, residual) = best.expect("at least one start");
    Ok(Solution {
        angles: model.chain_joints(chain).iter().map(|&joint| angles[joint]).collect(),
        position_error: residual.position,
        rotation_error: residual.rotation,
        reached: residual.reached(),
    })
}

/// The masked error left at some angles.
#[derive(Debug, Clone, Copy)]
struct Residual {
    position: f64,
    rotation: f64,
    /// Weighted squared error, what the descent lowers.
    cost: f64,
}

impl Residual {
    fn reached(&self) -> bool {
        self.position <= REACHED_POSITION && self.rotation <= REACHED_ROTATION
    }
}

struct Solver<'a> {
    model: &'a Model,
    chain: Chain,
    target: &'a Transform,
    axis_mask: u8,
    limits: &'a [(f64, f64)],
    pose: Pose,
}

impl Solver<'_> {
    /// Levenberg-Marquardt from `angles` (clamped first), leaving the best angles there.
    fn descend(&mut self, angles: &mut [f64]) -> Residual {
        let chain_joints = self.model.chain_joints(self.chain);
        for &joint in chain_joints {
            angles[joint] = self.clamp(joint, angles[joint]);
        }
        let mut error = self.error(angles);
        let mut residual = self.residual(&error);
        let mut damping = 1e-3;
        let mut trial = angles.to_vec();
        for _ in 0..ITERATIONS {
            if residual.position < CONVERGED_POSITION && residual.rotation < CONVERGED_ROTATION {
                break;
            }
            let jacobian = self.jacobian();
            let step = damped_step(&jacobian, &self.rows(), &limit_step(error), damping);
            trial.copy_from_slice(angles);
            for (column, &joint) in chain_joints.iter().enumerate() {
                trial[joint] = self.clamp(joint, angles[joint] + step[column]);
            }
            let trial_error = self.error(&trial);
            let trial_residual = self.residual(&trial_error);
            if trial_residual.cost < residual.cost {
                angles.copy_from_slice(&trial);
                error = trial_error;
                residual = trial_residual;
                damping = (damping * 0.5).max(1e-7);
            } else {
                damping *= 4.0;
                if damping > 1e3 {
                    break;
                }
            }
        }
        // Leave the pose at the best angles for the caller's next use of `self`.
        self.error(angles);
        residual
    }

    fn clamp(&self, joint: usize, angle: f64) -> f64 {
        let (min, max) = self.limits[joint];
        angle.max(min).min(max)
    }

    /// The rows (0-5: x, y, z, wx, wy, wz) the mask selects.
    fn rows(&self) -> Vec<usize> {
        (0..6).filter(|row| self.axis_mask & (1 << row) != 0).collect()
    }

    /// Target minus current: position (m) and rotation vector (rad, FRAME_TORSO) of the
    /// chain end, at `angles`; updates the pose.
    fn error(&mut self, angles: &[f64]) -> [f64; 6] {
        self.pose.update(self.model, angles);
        let end = self.pose.transform(self.model.chain_end(self.chain));
        let position = sub(self.target.translation, end.translation);
        let rotation = rotation_vector(&mul(&self.target.rotation, &transpose(&end.rotation)));
        [position[0], position[1], position[2], rotation[0], rotation[1], rotation[2]]
    }

    fn residual(&self, error: &[f64; 6]) -> Residual {
        let mut position = 0.0;
        let mut rotation = 0.0;
        for row in self.rows() {
            if row < 3 {
                position += error[row] * error[row];
            } else {
                rotation += error[row] * error[row];
            }
        }
        Residual {
            position: position.sqrt(),
            rotation: rotation.sqrt(),
            cost: position + ROTATION_WEIGHT * ROTATION_WEIGHT * rotation,
        }
    }

    /// d(end position, end rotation)/d(angle) per chain joint, at the pose's angles.
    fn jacobian(&self) -> Vec<[f64; 6]> {
        let end = self.pose.transform(self.model.chain_end(self.chain)).translation;
        let chain_joints = self.model.chain_joints(self.chain);
        chain_joints
            .iter()
            .map(|&joint| match self.model.joint_axis(joint) {
                None => [0.0; 6],
                Some(local_axis) => {
                    let frame = self.pose.transform(self.model.joint_frame(joint));
                    let axis = rotate(&frame.rotation, local_axis);
                    let linear = cross(axis, sub(end, frame.translation));
                    [linear[0], linear[1], linear[2], axis[0], axis[1], axis[2]]
                }
            })
            .collect()
    }
}

/// The error, shortened to what one linearised step can be trusted with.
fn limit_step(error: [f64; 6]) -> [f64; 6] {
    let position = norm([error[0], error[1], error[2]]);
    let rotation = norm([error[3], error[4], error[5]]);
    let p = if position > MAX_STEP_POSITION { MAX_STEP_POSITION / position } else { 1.0 };
    let r = if rotation > MAX_STEP_ROTATION { MAX_STEP_ROTATION / rotation } else { 1.0 };
    [error[0] * p, error[1] * p, error[2] * p, error[3] * r, error[4] * r, error[5] * r]
}

/// Δθ = Jᵀ (J Jᵀ + λ I)⁻¹ e over the selected rows, rotation rows weighted.
fn damped_step(jacobian: &[[f64; 6]], rows: &[usize], error: &[f64; 6], damping: f64) -> Vec<f64> {
    let weight = |row: usize| if row < 3 { 1.0 } else { ROTATION_WEIGHT };
    let m = rows.len();
    let mut system = [[0.0; 7]; 6];
    for (i, &row_i) in rows.iter().enumerate() {
        for (j, &row_j) in rows.iter().enumerate() {
            let dot: f64 = jacobian.iter().map(|column| column[row_i] * column[row_j]).sum();
            system[i][j] = dot * weight(row_i) * weight(row_j) + if i == j { damping } else { 0.0 };
        }
        system[i][6] = error[row_i] * weight(row_i);
    }
    let y = solve_linear(&mut system, m);
    jacobian
        .iter()
        .map(|column| rows.iter().enumerate().map(|(i, &row)| column[row] * weight(row) * y[i]).sum())
        .collect()
}

/// Gaussian elimination with partial pivoting of the m×m system whose right-hand side is
/// column 6. The damping keeps it positive definite.
fn solve_linear(system: &mut [[f64; 7]; 6], m: usize) -> [f64; 6] {
    for pivot in 0..m {
        let best = (pivot..m)
            .max_by(|&a, &b| system[a][pivot].abs().total_cmp(&system[b][pivot].abs()))
            .unwrap_or(pivot);
        system.swap(pivot, best);
        let pivot_row = system[pivot];
        for row in system.iter_mut().take(m).skip(pivot + 1) {
            let factor = row[pivot] / pivot_row[pivot];
            for (value, pivot_value) in row.iter_mut().zip(pivot_row).skip(pivot) {
                *value -= factor * pivot_value;
            }
        }
    }
    let mut solution = [0.0; 6];
    for row in (0..m).rev() {
        let known: f64 = (row + 1..m).map(|column| system[row][column] * solution[column]).sum();
        solution[row] = (system[row][6] - known) / system[row][row];
    }
    solution
}
