//! Rigid transforms: rotation and translation, NAOqi's Position6D and 4x4 matrices.

/// A 3x3 rotation, row-major.
pub type Rotation = [[f64; 3]; 3];

/// A rigid transform: rotation (row-major 3x3) and translation (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    pub rotation: Rotation,
    pub translation: [f64; 3],
}

const IDENTITY_ROTATION: Rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// How far from orthonormal a matrix may be and still count as a rotation: NAOqi's
/// matrices come as 32-bit floats.
const RIGID_TOLERANCE: f64 = 1e-4;

impl Transform {
    pub const IDENTITY: Transform = Transform { rotation: IDENTITY_ROTATION, translation: [0.0; 3] };

    /// A pure translation.
    pub fn translation(translation: [f64; 3]) -> Transform {
        Transform { rotation: IDENTITY_ROTATION, translation }
    }

    /// `self * child`: the child's transform expressed in the frame `self` is expressed in.
    pub fn then(&self, child: &Transform) -> Transform {
        Transform {
            rotation: mul(&self.rotation, &child.rotation),
            translation: add(self.apply_rotation(child.translation), self.translation),
        }
    }

    pub fn inverse(&self) -> Transform {
        let rotation = transpose(&self.rotation);
        let t = rotate(&rotation, self.translation);
        Transform { rotation, translation: [-t[0], -t[1], -t[2]] }
    }

    /// A point of the child frame in this transform's parent frame.
    pub fn apply(&self, point: [f64; 3]) -> [f64; 3] {
        add(self.apply_rotation(point), self.translation)
    }

    /// A direction of the child frame in the parent frame.
    pub fn apply_rotation(&self, vector: [f64; 3]) -> [f64; 3] {
        rotate(&self.rotation, vector)
    }

    /// NAOqi's Position6D [x, y, z, wx, wy, wz]: R = Rz(wz)·Ry(wy)·Rx(wx).
    pub fn to_position6d(&self) -> [f64; 6] {
        let [wx, wy, wz] = rotation_to_rpy(&self.rotation);
        let [x, y, z] = self.translation;
        [x, y, z, wx, wy, wz]
    }

    pub fn from_position6d(p: [f64; 6]) -> Transform {
        Transform { rotation: rpy_to_rotation([p[3], p[4], p[5]]), translation: [p[0], p[1], p[2]] }
    }

    /// NAOqi's getTransform: the 4x4 matrix row-major, 16 floats (last row 0 0 0 1).
    pub fn to_matrix16(&self) -> [f64; 16] {
        let r = &self.rotation;
        let t = &self.translation;
        [
            r[0][0], r[0][1], r[0][2], t[0], //
            r[1][0], r[1][1], r[1][2], t[1], //
            r[2][0], r[2][1], r[2][2], t[2], //
            0.0, 0.0, 0.0, 1.0,
        ]
    }

    /// None when `m` is not a rigid transform (its rotation not orthonormal with
    /// determinant 1, or its last row not 0 0 0 1).
    pub fn from_matrix16(m: &[f64; 16]) -> Option<Transform> {
        if m.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let last_row = [m[12], m[13], m[14], m[15]];
        if last_row.iter().zip([0.0, 0.0, 0.0, 1.0]).any(|(a, b)| (a - b).abs() > RIGID_TOLERANCE) {
            return None;
        }
        let rotation = [[m[0], m[1], m[2]], [m[4], m[5], m[6]], [m[8], m[9], m[10]]];
        let product = mul(&transpose(&rotation), &rotation);
        for (i, row) in product.iter().enumerate() {
            for (j, value) in row.iter().enumerate() {
                let expected = if i == j { 1.0 } else { 0.0 };
                if (value - expected).abs() > RIGID_TOLERANCE {
                    return None;
                }
            }
        }
        if determinant(&rotation) < 0.0 {
            return None;
        }
        Some(Transform { rotation, translation: [m[3], m[7], m[11]] })
    }
}

/// Roll, pitch, yaw [wx, wy, wz] of R = Rz(wz)·Ry(wy)·Rx(wx).
pub fn rotation_to_rpy(r: &Rotation) -> [f64; 3] {
    let wy = (-r[2][0]).atan2((r[0][0] * r[0][0] + r[1][0] * r[1][0]).sqrt());
    let wx = r[2][1].atan2(r[2][2]);
    let wz = r[1][0].atan2(r[0][0]);
    [wx, wy, wz]
}

/// R = Rz(wz)·Ry(wy)·Rx(wx).
pub fn rpy_to_rotation([wx, wy, wz]: [f64; 3]) -> Rotation {
    let rz = axis_angle([0.0, 0.0, 1.0], wz);
    let ry = axis_angle([0.0, 1.0, 0.0], wy);
    let rx = axis_angle([1.0, 0.0, 0.0], wx);
    mul(&mul(&rz, &ry), &rx)
}

/// Rodrigues' formula: the rotation of `angle` around the unit vector `axis`.
pub fn axis_angle(axis: [f64; 3], angle: f64) -> Rotation {
    let [x, y, z] = axis;
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    [
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
    ]
}

/// The rotation vector (axis times angle, angle in [0, π]) of `r`.
pub fn rotation_vector(r: &Rotation) -> [f64; 3] {
    let cos = ((r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0);
    let angle = cos.acos();
    let skew = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
    let sin = angle.sin();
    if sin > 1e-6 {
        let k = angle / (2.0 * sin);
        return [skew[0] * k, skew[1] * k, skew[2] * k];
    }
    if cos > 0.0 {
        // Near the identity: R ≈ I + [v]×.
        return [skew[0] / 2.0, skew[1] / 2.0, skew[2] / 2.0];
    }
    // Near a half turn: R ≈ 2·a·aᵀ - I; the axis from the largest diagonal term.
    let diagonal = [r[0][0], r[1][1], r[2][2]];
    let i = (0..3).fold(0, |best, k| if diagonal[k] > diagonal[best] { k } else { best });
    let mut axis = [0.0; 3];
    let largest = ((diagonal[i] + 1.0) / 2.0).max(0.0).sqrt();
    for (k, value) in axis.iter_mut().enumerate() {
        *value = if k == i { largest } else { (r[i][k] + r[k][i]) / (4.0 * largest) };
    }
    let norm = norm(axis);
    [axis[0] / norm * angle, axis[1] / norm * angle, axis[2] / norm * angle]
}

pub fn mul(a: &Rotation, b: &Rotation) -> Rotation {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, value) in row.iter_mut().enumerate() {
            *value = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    out
}

pub fn transpose(a: &Rotation) -> Rotation {
    [[a[0][0], a[1][0], a[2][0]], [a[0][1], a[1][1], a[2][1]], [a[0][2], a[1][2], a[2][2]]]
}

pub fn rotate(r: &Rotation, v: [f64; 3]) -> [f64; 3] {
    [
        r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
        r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
        r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
    ]
}

fn determinant(r: &Rotation) -> f64 {
    r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
        + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0])
}

pub fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

pub fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// The transform `fraction` of the way from `from` to `to`: the translation on the straight
/// line, the rotation turned about one axis.
pub fn between(from: &Transform, to: &Transform, fraction: f64) -> Transform {
    let turn = rotation_vector(&mul(&transpose(&from.rotation), &to.rotation));
    let angle = norm(turn);
    let rotation = if angle < 1e-12 {
        from.rotation
    } else {
        mul(&from.rotation, &axis_angle(turn.map(|v| v / angle), angle * fraction))
    };
    let translation =
        [0, 1, 2].map(|axis| from.translation[axis] * (1.0 - fraction) + to.translation[axis] * fraction);
    Transform { rotation, translation }
}

/// `angle` (rad) brought into (-π, π].
pub fn wrap_angle(angle: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    let wrapped = angle - (angle / TAU).round() * TAU;
    if wrapped <= -PI {
        wrapped + TAU
    } else {
        wrapped
    }
}
