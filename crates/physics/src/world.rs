//! The worlds a simulated robot can stand in: flat ground, or a room with a wall in front
//! and a ball on the floor. The robot starts at the origin facing +x.

use std::fmt::Write;

/// Where the robot is simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum World {
    /// An endless flat floor.
    #[default]
    Flat,
    /// The floor, a wall 1.5 m in front of the robot (3 m wide, 1 m high, across the x
    /// axis) and an SPL ball (100 mm, 44 g) 0.6 m in front, a little to the left.
    Room,
}

/// The wall's near face, m from the origin along x.
pub const ROOM_WALL_X_M: f64 = 1.5;

impl World {
    pub fn from_name(name: &str) -> Option<World> {
        match name {
            "flat" => Some(World::Flat),
            "room" => Some(World::Room),
            _ => None,
        }
    }

    /// The world's geoms and bodies, as MJCF inside `<worldbody>`. World geoms collide with
    /// the robot and with each other (contype 1, conaffinity 3); the objects form geom group
    /// 0, the one the sonars hear; the ground is group 2 (a sonar's beam grazes it: no echo).
    pub(crate) fn write_mjcf(self, friction: f64, out: &mut String) {
        let world = "contype=\"1\" conaffinity=\"3\" group=\"0\"";
        let _ = writeln!(
            out,
            "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" friction=\"{friction} 0.005 0.0001\" \
             contype=\"1\" conaffinity=\"3\" group=\"2\"/>"
        );
        if self == World::Room {
            let half_thickness = 0.05;
            let _ = writeln!(
                out,
                "    <geom name=\"wall\" type=\"box\" pos=\"{} 0 0.5\" size=\"{half_thickness} 1.5 0.5\" \
                 {world}/>",
                ROOM_WALL_X_M + half_thickness
            );
            let _ = writeln!(
                out,
                "    <body name=\"ball\" pos=\"0.6 0.2 0.05\">\n      <freejoint name=\"ball\"/>\n      \
                 <geom name=\"ball\" type=\"sphere\" size=\"0.05\" mass=\"0.044\" {world}/>\n    </body>"
            );
        }
    }
}
