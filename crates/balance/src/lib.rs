//! NAO's whole-body balance (docs/whole-body.md), pure like naobroker-kinematics and
//! naobroker-walk: ALMotion's motion cycle drives it. Each cycle it solves the legs so that
//! each foot keeps its constraint (fixed on the ground, sliding in the ground's plane, or
//! free to follow a Cartesian target), the torso follows its target, and the centre of mass
//! of the whole body (arms and head as they are commanded) stays over the support polygon.
//! Nothing here allocates after construction.
#![deny(unsafe_code, unreachable_pub)]

mod path;
mod polygon;
mod solver;

pub use path::{Path, PathFull, MAX_PATH_KEYS};
pub use polygon::{SupportPolygon, MAX_VERTICES};
pub use solver::{
    over_foot, support_polygon, ComGoal, FootState, Goal, Side, Solved, WholeBody, MARGIN_M, SOLE,
};
