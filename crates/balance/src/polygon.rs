//! The support polygon: the convex hull of the soles that carry the robot, on the ground
//! (x, y), in fixed-size storage so that the motion cycle builds one every cycle without
//! allocating.

/// Two soles' four corners.
pub const MAX_VERTICES: usize = 8;

/// A convex polygon, counter-clockwise, of at most [`MAX_VERTICES`] vertices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SupportPolygon {
    vertices: [[f64; 2]; MAX_VERTICES],
    count: usize,
}

impl SupportPolygon {
    /// The convex hull of `points` (at most [`MAX_VERTICES`]; extra ones are ignored).
    pub fn hull(points: &[[f64; 2]]) -> SupportPolygon {
        let mut sorted = [[0.0; 2]; MAX_VERTICES];
        let count = points.len().min(MAX_VERTICES);
        sorted[..count].copy_from_slice(&points[..count]);
        let sorted = &mut sorted[..count];
        sorted.sort_unstable_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
        // Andrew's monotone chain: the lower hull left to right, then the upper one back.
        let mut hull = [[0.0; 2]; 2 * MAX_VERTICES];
        let mut size = 0;
        for pass in 0..2 {
            let floor = size;
            for index in 0..count {
                let point = if pass == 0 { sorted[index] } else { sorted[count - 1 - index] };
                while size >= floor + 2 && cross(hull[size - 2], hull[size - 1], point) <= 0.0 {
                    size -= 1;
                }
                hull[size] = point;
                size += 1;
            }
            // The last point of each chain is the first of the other.
            size -= 1;
        }
        let mut polygon =
            SupportPolygon { vertices: [[0.0; 2]; MAX_VERTICES], count: size.min(MAX_VERTICES) };
        polygon.vertices[..polygon.count].copy_from_slice(&hull[..polygon.count]);
        polygon
    }

    pub fn vertices(&self) -> &[[f64; 2]] {
        &self.vertices[..self.count]
    }

    /// The vertices' mean: inside a convex polygon.
    pub fn centre(&self) -> [f64; 2] {
        let sum = self.vertices().iter().fold([0.0; 2], |sum, v| [sum[0] + v[0], sum[1] + v[1]]);
        let count = self.count.max(1) as f64;
        [sum[0] / count, sum[1] / count]
    }

    /// How far `point` is inside (positive) or outside (negative) the polygon's edges: the
    /// smallest signed distance to an edge's line.
    pub fn depth(&self, point: [f64; 2]) -> f64 {
        let vertices = self.vertices();
        if vertices.len() < 3 {
            return f64::NEG_INFINITY;
        }
        (0..vertices.len())
            .map(|index| {
                let (a, b) = (vertices[index], vertices[(index + 1) % vertices.len()]);
                let length = (b[0] - a[0]).hypot(b[1] - a[1]);
                if length == 0.0 {
                    f64::INFINITY
                } else {
                    cross(a, b, point) / length
                }
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// `point` if it lies at least `margin` inside, else the nearest point that does (the
    /// polygon's edges moved inward by `margin`; its centre when the polygon is narrower).
    pub fn clamp(&self, point: [f64; 2], margin: f64) -> [f64; 2] {
        let mut point = point;
        // Pushing the point in past each edge it is too close to, in turn, converges on the
        // inner polygon: a few rounds for the hull of two soles.
        for _ in 0..4 {
            let vertices = self.vertices();
            let mut moved = false;
            for index in 0..vertices.len() {
                let (a, b) = (vertices[index], vertices[(index + 1) % vertices.len()]);
                let length = (b[0] - a[0]).hypot(b[1] - a[1]);
                if length == 0.0 {
                    continue;
                }
                let inside = cross(a, b, point) / length;
                if inside < margin {
                    // The edge's inward normal, counter-clockwise order: left of a → b.
                    let normal = [-(b[1] - a[1]) / length, (b[0] - a[0]) / length];
                    let push = margin - inside;
                    point = [point[0] + normal[0] * push, point[1] + normal[1] * push];
                    moved = true;
                }
            }
            if !moved {
                return point;
            }
        }
        if self.depth(point) < margin - 1e-9 {
            self.centre()
        } else {
            point
        }
    }
}

/// Twice the signed area of the triangle a, b, c: positive when c is left of a → b.
fn cross(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> SupportPolygon {
        SupportPolygon::hull(&[[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])
    }

    #[test]
    fn the_hull_leaves_inner_points_out_and_runs_counter_clockwise() {
        let polygon = square();
        assert_eq!(polygon.vertices(), &[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
        assert_eq!(polygon.centre(), [0.5, 0.5]);
    }

    #[test]
    fn depth_is_the_distance_to_the_nearest_edge_negative_outside() {
        let polygon = square();
        assert!((polygon.depth([0.5, 0.5]) - 0.5).abs() < 1e-12);
        assert!((polygon.depth([0.9, 0.5]) - 0.1).abs() < 1e-12);
        assert!((polygon.depth([1.2, 0.5]) + 0.2).abs() < 1e-12);
    }

    #[test]
    fn clamp_keeps_a_point_inside_and_brings_one_outside_to_the_margin() {
        let polygon = square();
        assert_eq!(polygon.clamp([0.5, 0.4], 0.1), [0.5, 0.4]);
        let clamped = polygon.clamp([1.5, 2.0], 0.1);
        assert!((clamped[0] - 0.9).abs() < 1e-9 && (clamped[1] - 0.9).abs() < 1e-9, "{clamped:?}");
        assert_eq!(polygon.clamp([3.0, 0.5], 0.6), [0.5, 0.5], "narrower than twice the margin");
    }
}
