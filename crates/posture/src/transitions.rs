//! How the robot moves from one posture to a neighbouring one, as NAOqi's posture manager
//! does: through key poses (whole-body joint tables, reached in order) rather than one straight
//! interpolation where a straight one would topple it, and no faster than the body can take;
//! getting up from lying, through a stand-up motion (timed key frames) first. The key poses,
//! stand-up motions and speed limits were designed on the physically simulated NAO
//! (`naobroker-physics`) and are checked there end to end (docs/posture.md, "Transitions").

use crate::library::{
    self, Posture, Torso, CROUCH, LYING_BACK, LYING_BELLY, SIT, SIT_RELAX, STAND, STAND_INIT, STAND_ZERO,
};

/// How fast a pose is reached, as a fraction of the joints' top speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// The move's own `maxSpeedFraction`, or this when that is higher: faster, the body would
    /// topple.
    AtMost(f64),
    /// This, whatever the move's `maxSpeedFraction`: a motion that needs its momentum (getting
    /// up), slower, falls back; NAOqi's stand-up motions also keep their own pace.
    Fixed(f64),
}

impl Speed {
    /// The fraction of top speed a move asked for `asked` goes at.
    pub fn for_move(self, asked: f64) -> f64 {
        match self {
            Speed::AtMost(limit) => asked.min(limit),
            Speed::Fixed(pace) => pace,
        }
    }
}

/// A whole-body pose a transition passes through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyPose {
    /// What the robot does on its way to this pose.
    pub what: &'static str,
    pub joints: [(&'static str, f64); 26],
    pub speed: Speed,
}

/// A whole-body pose a stand-up motion passes through at its own time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyFrame {
    /// What the robot does on its way to this pose.
    pub what: &'static str,
    /// Seconds after the motion started.
    pub at_s: f64,
    pub joints: [(&'static str, f64); 26],
}

/// A move from one posture to a neighbouring one.
#[derive(Debug, PartialEq)]
pub struct Transition {
    pub from: &'static Posture,
    pub to: &'static Posture,
    /// A stand-up motion played first, as one `angleInterpolation` through its key frames at
    /// their times: getting up from the ground needs its momentum at its own pace, whatever
    /// the move's `maxSpeedFraction` (NAOqi's stand-up motions keep theirs too).
    pub motion: &'static [KeyFrame],
    /// Reached in order (after `motion`) before `to`'s own table.
    pub via: &'static [KeyPose],
    /// How fast `to` itself is reached (from the last key pose, or from `from`).
    pub speed: Speed,
}

/// A straight move at the speed asked for: any pair of postures without a [`Transition`].
pub const STRAIGHT: Transition =
    Transition { from: &STAND_INIT, to: &STAND_INIT, motion: &[], via: &[], speed: Speed::AtMost(1.0) };

/// A left-right symmetric pose from the left side's angles; the right side mirrors them (its
/// rolls and yaws change sign). `head`: HeadYaw, HeadPitch; `arm`: ShoulderPitch, ShoulderRoll,
/// ElbowYaw, ElbowRoll, WristYaw, Hand; `leg`: HipYawPitch, HipRoll, HipPitch, KneePitch,
/// AnklePitch, AnkleRoll.
const fn symmetric(head: [f64; 2], arm: [f64; 6], leg: [f64; 6]) -> [(&'static str, f64); 26] {
    let [shoulder_pitch, shoulder_roll, elbow_yaw, elbow_roll, wrist_yaw, hand] = arm;
    let [hip_yaw_pitch, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll] = leg;
    library::table([
        head[0],
        head[1],
        shoulder_pitch,
        shoulder_roll,
        elbow_yaw,
        elbow_roll,
        wrist_yaw,
        hand,
        hip_yaw_pitch,
        hip_roll,
        hip_pitch,
        knee,
        ankle_pitch,
        ankle_roll,
        hip_yaw_pitch,
        -hip_roll,
        hip_pitch,
        knee,
        ankle_pitch,
        -ankle_roll,
        shoulder_pitch,
        -shoulder_roll,
        -elbow_yaw,
        -elbow_roll,
        -wrist_yaw,
        hand,
    ])
}

/// Sitting down from Crouch. The hip cannot come down behind the heels with the feet flat
/// and the knees at their limit (Crouch's), so the robot first squats lower, the hip yaw-pitch
/// spreading the thighs and bending the hips further than HipPitch alone can, the arms
/// reaching forward: the centre of mass stays over the feet until the bottom is a few
/// centimetres above the ground. Then it sits down on its bottom, arms forward (raised higher,
/// their weight behind the hips rolls the robot back) and head up, the knees and ankles
/// already turning towards Sit's, and Sit's table brings the feet forward.
const CROUCH_TO_SIT: [KeyPose; 2] = [
    KeyPose {
        what: "squat low, arms forward",
        joints: symmetric(
            [0.0, 0.23],
            [-0.58, -0.18, -0.79, -0.46, 0.15, 0.0],
            [-0.94, -0.12, -1.53, 1.28, 0.55, 0.08],
        ),
        speed: Speed::AtMost(0.3),
    },
    KeyPose {
        what: "sit down, arms forward, head up",
        joints: symmetric(
            [0.0, -0.6],
            [-0.5, 0.18, -0.79, -0.17, 0.15, 0.0],
            [-0.99, 0.16, -1.53, 1.15, 0.9, 0.08],
        ),
        speed: Speed::AtMost(0.5),
    },
];

/// Standing up from Sit to Crouch: the feet pulled in under the bottom and the torso leaning
/// far forward put the weight on the feet (the bottom lifts), then the legs push the hips up
/// and forward over the feet while the arms swing down and out, into a crouch with the knees
/// apart, which close as the torso straightens, and Crouch's table ends it. It needs its
/// momentum: slower, the hips cannot lift the torso (the hip yaw-pitch, one motor for both
/// legs, gives up first) and the robot sits back down or falls back, so it keeps its own pace.
const SIT_TO_CROUCH: [KeyPose; 4] = [
    KeyPose {
        what: "feet in, lean far forward",
        joints: symmetric(
            [0.0, -0.36],
            [-0.22, -0.02, -0.49, -0.15, 0.0, 0.29],
            [-1.09, -0.12, -1.53, 1.16, 0.92, 0.0],
        ),
        speed: Speed::Fixed(0.3),
    },
    KeyPose {
        what: "hips up over the feet, arms down and out",
        joints: symmetric(
            [0.0, -0.11],
            [1.08, 0.91, -0.49, -0.17, 0.0, 0.29],
            [-1.06, 0.2, -0.45, 1.69, 0.21, 0.0],
        ),
        speed: Speed::Fixed(0.3),
    },
    KeyPose {
        what: "crouch, knees apart",
        joints: symmetric(
            [0.0, 0.07],
            [0.27, 0.33, -0.49, -0.09, 0.0, 0.29],
            [-1.08, 0.48, -0.62, 2.09, -0.58, 0.0],
        ),
        speed: Speed::Fixed(0.3),
    },
    KeyPose {
        what: "knees closing, arms down",
        joints: symmetric(
            [0.0, -0.17],
            [0.79, 0.35, -0.49, -0.11, 0.0, 0.29],
            [-0.62, -0.02, -0.93, 2.11, -0.8, 0.0],
        ),
        speed: Speed::Fixed(0.3),
    },
];

/// Leaning back on the hands: the arms go out to the sides (pointing back past the thighs
/// they would hit them), then behind, the legs stretching out in front as a counterweight, and
/// SitRelax's table leans the torso back onto the hands.
const SIT_TO_SIT_RELAX: [KeyPose; 2] = [
    KeyPose {
        what: "arms out to the sides",
        joints: symmetric(
            [0.0, 0.0],
            [0.9, 0.9, -0.49, -0.3, 0.0, 0.29],
            [-0.607, 0.27, -1.53, 1.39, 0.84, 0.0],
        ),
        speed: Speed::AtMost(1.0),
    },
    KeyPose {
        what: "hands behind, legs stretched",
        joints: symmetric(
            [0.0, 0.0],
            [2.0, 0.4, -2.0, -0.2, -0.95, 0.29],
            [-0.607, 0.27, -1.53, -0.04, 0.92, 0.0],
        ),
        speed: Speed::AtMost(1.0),
    },
];

/// Sitting up from SitRelax: the hips bend the torso up over the stretched legs while the
/// hands still hold it, the arms come forward round the sides, and Sit's table draws the feet
/// in. Sit rests on the round bottom with the centre of mass a few centimetres ahead of it, so
/// the last leg is slow: arriving faster, the robot rocks back over.
const SIT_RELAX_TO_SIT: [KeyPose; 2] = [
    KeyPose {
        what: "sit up over the stretched legs",
        joints: symmetric(
            [0.0, 0.0],
            [2.0, 0.4, -2.0, -0.2, -0.95, 0.14],
            [-0.6, 0.2, -1.53, -0.04, 0.92, 0.0],
        ),
        speed: Speed::AtMost(0.3),
    },
    KeyPose {
        what: "arms forward round the sides",
        joints: symmetric(
            [0.0, 0.0],
            [0.9, 0.9, -0.5, -0.3, 0.0, 0.14],
            [-0.6, 0.2, -1.53, -0.04, 0.92, 0.0],
        ),
        speed: Speed::AtMost(0.5),
    },
];

/// Lying back from Sit: the legs stretch out, the arms reach forward and the chin tucks in (the
/// back lands before the head), then LyingBack's table lets the torso down.
const SIT_TO_LYING_BACK: [KeyPose; 1] = [KeyPose {
    what: "legs out, arms forward, chin in",
    joints: symmetric(
        [0.0, 0.5],
        [0.5, 0.3, -0.49, -0.5, 0.0, 0.29],
        [-0.607, 0.27, -1.53, -0.04, 0.92, 0.0],
    ),
    speed: Speed::AtMost(1.0),
}];

/// Lying on the belly from Crouch: the arms go up and forward, the robot leans forward and
/// goes down on its knees, falling forward onto its forearms stretched ahead (arms that
/// reach for the ground are pinned under the chest), then turns its head aside with the arms
/// still out, and LyingBelly's table stretches the legs and lays the arms by the head.
const CROUCH_TO_LYING_BELLY: [KeyPose; 4] = [
    KeyPose {
        what: "arms up and forward",
        joints: symmetric(
            [0.0, -0.3],
            [-1.2, 0.3, -0.5, -0.3, 0.15, 0.0],
            [-0.25, -0.08, -0.7, 2.11, -1.18, 0.08],
        ),
        speed: Speed::AtMost(0.3),
    },
    KeyPose {
        what: "lean forward",
        joints: symmetric(
            [0.0, -0.3],
            [-1.2, 0.3, -0.5, -0.3, 0.15, 0.0],
            [-0.25, -0.08, -1.4, 2.11, -1.18, 0.08],
        ),
        speed: Speed::AtMost(0.3),
    },
    KeyPose {
        what: "down on the knees and forearms",
        joints: symmetric(
            [0.0, -0.3],
            [-1.2, 0.3, -0.5, -0.3, 0.15, 0.0],
            [-0.25, -0.08, -1.0, 2.11, 0.5, 0.08],
        ),
        speed: Speed::AtMost(0.3),
    },
    KeyPose {
        what: "head aside, arms out, legs stretched",
        joints: symmetric(
            [-0.69, -0.31],
            [-1.2, 1.0, -0.5, -0.3, 0.0, 0.0],
            [-0.02, 0.12, 0.2, -0.09, 0.8, 0.0],
        ),
        speed: Speed::AtMost(0.3),
    },
];

/// Sitting up from LyingBack, as RoboCup teams' stand-up motions do it (this follows the
/// design of rUNSWift's `getupBackSlow.pos`, UNSW, BSD licence; the angles and times are this
/// module's, found on the physical model): the arms go along the body, then the hips bridge
/// up on the bent knees so that the hands slide under the back, elbows bent, chin in; the
/// feet go out and the bent legs up, and then down hard while the hips bend and the elbows
/// straighten: the legs' swing and the forearms' push bring the torso up over the hips (the
/// hips alone lift the lighter legs instead, docs/posture.md). It ends sitting over the
/// stretched legs, hands behind, where SitRelax → Sit goes on.
const LYING_BACK_TO_SIT: [KeyFrame; 6] = [
    KeyFrame {
        what: "arms along the body, out to the sides",
        at_s: 0.7,
        joints: symmetric([0.0, 0.0], [1.57, 0.49, 0.0, -0.04, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    },
    KeyFrame {
        what: "hips up on the bent knees, hands under the back",
        at_s: 1.7,
        joints: symmetric(
            [0.0, 0.35],
            [2.01, 0.26, -0.1, -1.19, 0.0, 0.0],
            [0.0, -0.1, 0.49, 1.85, -0.31, 0.45],
        ),
    },
    KeyFrame {
        what: "feet out, chin in",
        at_s: 2.47,
        joints: symmetric(
            [0.0, 0.51],
            [2.06, 0.14, 0.26, -1.47, -0.47, 0.0],
            [0.09, -0.14, 0.47, 0.77, 0.89, 0.0],
        ),
    },
    KeyFrame {
        what: "bent legs up",
        at_s: 3.15,
        joints: symmetric(
            [0.0, 0.45],
            [1.99, 0.35, 0.07, -1.54, -0.1, 0.0],
            [0.0, 0.0, -0.91, 1.05, 0.91, -0.19],
        ),
    },
    KeyFrame {
        what: "legs down hard, hips bending, elbows straightening: the torso comes up",
        at_s: 3.7,
        joints: symmetric(
            [0.0, 0.51],
            [1.99, 0.31, -0.14, -0.73, -0.4, 0.0],
            [-0.56, -0.03, -1.53, 0.31, 0.61, -0.38],
        ),
    },
    KeyFrame {
        what: "sitting over the stretched legs, hands behind",
        at_s: 4.4,
        joints: SIT_RELAX_TO_SIT[0].joints,
    },
];

/// Seconds the belly's stand-up motion takes to lie on the back, arms along the body, still.
const ON_THE_BACK_S: f64 = 3.49;

/// Getting up from LyingBelly: the robot rolls onto its back and sits up from there (its
/// forearms and knees cannot bring its weight back onto its feet, docs/posture.md). The roll
/// is this module's, found on the physical model: the head turns right and the left arm
/// pushes the left shoulder up while the left knee comes under the body; the left arm swings
/// up and over, the right one lying along the body; arms and legs stretch out as the robot
/// lands on its back. Lying still with the arms along the body, it sits up as from LyingBack
/// (`LYING_BACK_TO_SIT`), then goes on as SitRelax → Sit and Sit → Crouch do.
const LYING_BELLY_TO_CROUCH: [KeyFrame; 10] = [
    KeyFrame {
        what: "head right, left arm pushing, left knee under the body",
        at_s: 0.44,
        joints: library::table([
            -1.08, -0.22, 0.12, 0.55, 0.06, -0.04, 0.38, 0.0, -0.04, 0.0, -0.95, 0.28, 0.49, 0.07, -0.04,
            -0.17, -0.22, -0.09, 0.52, 0.01, 1.7, -0.13, 0.06, 0.12, -0.09, 0.0,
        ]),
    },
    KeyFrame {
        what: "left arm up and over, rolling onto the right side",
        at_s: 1.04,
        joints: library::table([
            -0.98, 0.16, -0.5, 1.03, -0.01, -0.16, 0.0, 0.0, 0.1, 0.45, -0.96, 1.02, 0.91, 0.0, 0.1, -0.1,
            -0.25, 0.1, 0.37, 0.29, 2.08, 0.1, 0.01, 0.07, -0.23, 0.0,
        ]),
    },
    KeyFrame {
        what: "arms and legs out, landing on the back",
        at_s: 1.79,
        joints: library::table([
            0.21, -0.02, 1.5, -0.16, 0.0, -0.22, 0.0, 0.0, -0.93, -0.14, 0.0, 0.0, 0.07, 0.0, -0.93, 0.21,
            -0.13, 0.0, 0.91, 0.05, 1.76, -0.42, -0.04, 0.05, -0.01, 0.0,
        ]),
    },
    KeyFrame { at_s: ON_THE_BACK_S - 1.0, ..LYING_BACK_TO_SIT[0] },
    KeyFrame { what: "lying still on the back", at_s: ON_THE_BACK_S, ..LYING_BACK_TO_SIT[0] },
    sitting_up_after_rolling(1),
    sitting_up_after_rolling(2),
    sitting_up_after_rolling(3),
    sitting_up_after_rolling(4),
    sitting_up_after_rolling(5),
];

/// LyingBack → Sit's key frame `index`, played once the roll onto the back has ended.
const fn sitting_up_after_rolling(index: usize) -> KeyFrame {
    KeyFrame {
        at_s: ON_THE_BACK_S + LYING_BACK_TO_SIT[index].at_s - LYING_BACK_TO_SIT[0].at_s,
        ..LYING_BACK_TO_SIT[index]
    }
}

/// From sitting over the stretched legs, hands behind, to Crouch: SitRelax → Sit's key poses,
/// Sit, then Sit → Crouch's, which keep their pace.
const SITTING_TO_CROUCH: [KeyPose; 7] = [
    SIT_RELAX_TO_SIT[0],
    SIT_RELAX_TO_SIT[1],
    KeyPose { what: "Sit", joints: library::SIT_TABLE, speed: Speed::AtMost(0.2) },
    SIT_TO_CROUCH[0],
    SIT_TO_CROUCH[1],
    SIT_TO_CROUCH[2],
    SIT_TO_CROUCH[3],
];

/// The transitions that are no straight move at any speed.
pub const TRANSITIONS: [Transition; 14] = [
    // Between the standing postures faster, the robot rocks on its feet, and two such moves in
    // a row (Stand → StandInit → StandZero) throw it over.
    Transition { from: &STAND_INIT, to: &STAND, motion: &[], via: &[], speed: Speed::AtMost(0.5) },
    Transition { from: &STAND, to: &STAND_INIT, motion: &[], via: &[], speed: Speed::AtMost(0.5) },
    Transition { from: &STAND_INIT, to: &STAND_ZERO, motion: &[], via: &[], speed: Speed::AtMost(0.5) },
    Transition { from: &STAND_ZERO, to: &STAND_INIT, motion: &[], via: &[], speed: Speed::AtMost(0.5) },
    // Standing up from the crouch faster throws the robot on its back.
    Transition { from: &CROUCH, to: &STAND_INIT, motion: &[], via: &[], speed: Speed::AtMost(0.3) },
    // Crouching faster, the robot pitches over its toes.
    Transition { from: &STAND_INIT, to: &CROUCH, motion: &[], via: &[], speed: Speed::AtMost(0.6) },
    Transition { from: &CROUCH, to: &SIT, motion: &[], via: &CROUCH_TO_SIT, speed: Speed::AtMost(1.0) },
    Transition { from: &SIT, to: &CROUCH, motion: &[], via: &SIT_TO_CROUCH, speed: Speed::Fixed(0.3) },
    // SitRelax reached faster still rocks when the next move starts.
    Transition { from: &SIT, to: &SIT_RELAX, motion: &[], via: &SIT_TO_SIT_RELAX, speed: Speed::AtMost(0.3) },
    Transition { from: &SIT_RELAX, to: &SIT, motion: &[], via: &SIT_RELAX_TO_SIT, speed: Speed::AtMost(0.2) },
    // Rolling onto the back, sitting up, then as from SitRelax and from Sit.
    Transition {
        from: &LYING_BELLY,
        to: &CROUCH,
        motion: &LYING_BELLY_TO_CROUCH,
        via: &SITTING_TO_CROUCH,
        speed: Speed::Fixed(0.3),
    },
    // Sitting up from lying on the back, then as from SitRelax.
    Transition {
        from: &LYING_BACK,
        to: &SIT,
        motion: &LYING_BACK_TO_SIT,
        via: &SIT_RELAX_TO_SIT,
        speed: Speed::AtMost(0.2),
    },
    Transition {
        from: &SIT,
        to: &LYING_BACK,
        motion: &[],
        via: &SIT_TO_LYING_BACK,
        speed: Speed::AtMost(0.3),
    },
    Transition {
        from: &CROUCH,
        to: &LYING_BELLY,
        motion: &[],
        via: &CROUCH_TO_LYING_BELLY,
        speed: Speed::AtMost(0.3),
    },
];

/// How the robot goes from `from` to `to`: its [`Transition`], or [`STRAIGHT`].
pub fn between(from: &Posture, to: &Posture) -> &'static Transition {
    TRANSITIONS.iter().find(|transition| transition.from == from && transition.to == to).unwrap_or(&STRAIGHT)
}

/// A move from a posture whose torso lies `from` to one whose torso lies `to` lies the
/// robot down or gets it up: its torso passes the fall manager's threshold on purpose.
pub fn lies_down_or_gets_up(from: Torso, to: Torso) -> bool {
    from != Torso::Upright || to != Torso::Upright
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph;
    use crate::library::LIBRARY;

    #[test]
    fn transitions_join_neighbours_once_each_way_and_limit_speeds_within_0_to_1() {
        for (index, transition) in TRANSITIONS.iter().enumerate() {
            let (from, to) = (transition.from, transition.to);
            assert_eq!(graph::path(from, to).len(), 2, "{} → {} are no neighbours", from.name, to.name);
            assert!(
                TRANSITIONS[..index].iter().all(|earlier| (earlier.from, earlier.to) != (from, to)),
                "{} → {} twice",
                from.name,
                to.name
            );
            for speed in transition.via.iter().map(|key| key.speed).chain([transition.speed]) {
                let (Speed::AtMost(fraction) | Speed::Fixed(fraction)) = speed;
                assert!(fraction > 0.0 && fraction <= 1.0, "{} → {}: {speed:?}", from.name, to.name);
            }
        }
    }

    #[test]
    fn between_finds_the_transition_of_that_direction_else_a_straight_move() {
        let sitting = between(&CROUCH, &SIT);
        assert_eq!((sitting.from, sitting.to, sitting.via.len()), (&CROUCH, &SIT, 2));
        assert_eq!(between(&CROUCH, &STAND_ZERO), &STRAIGHT, "no neighbours: applyPosture");
        for posture in LIBRARY {
            assert_eq!(between(posture, posture), &STRAIGHT, "{}", posture.name);
        }
        assert_eq!(STRAIGHT.via.len(), 0);
        assert_eq!(STRAIGHT.speed.for_move(0.4), 0.4);
    }

    #[test]
    fn key_poses_and_frames_name_every_joint_once_and_mirror_left_and_right() {
        let key_poses =
            TRANSITIONS.iter().flat_map(|transition| transition.via).map(|key| (key.what, &key.joints));
        let frames =
            TRANSITIONS.iter().flat_map(|transition| transition.motion).map(|key| (key.what, &key.joints));
        // Rolling over is one-sided on purpose, and NAOqi's Sit table is not quite mirrored.
        let rolling = &LYING_BELLY_TO_CROUCH[..3];
        for (what, joints) in key_poses.chain(frames) {
            let angle = |name: &str| joints.iter().find(|(joint, _)| *joint == name).unwrap().1;
            let mut names: Vec<&str> = joints.iter().map(|(name, _)| *name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), 26, "{what}");
            assert_eq!(angle("LHipYawPitch"), angle("RHipYawPitch"), "{what}: one motor");
            if rolling.iter().any(|frame| frame.what == what) || *joints == library::SIT_TABLE {
                continue;
            }
            for (left, right, sign) in [
                ("LShoulderRoll", "RShoulderRoll", -1.0),
                ("LElbowYaw", "RElbowYaw", -1.0),
                ("LHipRoll", "RHipRoll", -1.0),
                ("LKneePitch", "RKneePitch", 1.0),
                ("LAnkleRoll", "RAnkleRoll", -1.0),
            ] {
                assert_eq!(angle(left), sign * angle(right), "{what}: {left}");
            }
        }
    }

    #[test]
    fn stand_up_motions_get_up_from_lying_with_key_frames_in_time_order() {
        for transition in TRANSITIONS.iter().filter(|transition| !transition.motion.is_empty()) {
            assert_ne!(transition.from.torso, Torso::Upright, "{}", transition.from.name);
            let times: Vec<f64> = transition.motion.iter().map(|frame| frame.at_s).collect();
            assert!(times[0] > 0.0 && times.windows(2).all(|pair| pair[0] < pair[1]), "{times:?}");
        }
        assert_eq!(between(&LYING_BACK, &SIT).motion.len(), 6);
        let from_the_belly = between(&LYING_BELLY, &CROUCH);
        let joints = |frames: &[KeyFrame]| frames.iter().map(|frame| frame.joints).collect::<Vec<_>>();
        assert_eq!(joints(&from_the_belly.motion[4..]), joints(&LYING_BACK_TO_SIT), "then as from the back");
        let (last, back_last) = (from_the_belly.motion[9].at_s, LYING_BACK_TO_SIT[5].at_s);
        assert!((last - (ON_THE_BACK_S + back_last - LYING_BACK_TO_SIT[0].at_s)).abs() < 1e-9);
    }

    #[test]
    fn a_limit_caps_the_speed_asked_and_a_fixed_pace_ignores_it() {
        assert_eq!(Speed::AtMost(0.3).for_move(0.8), 0.3);
        assert_eq!(Speed::AtMost(0.3).for_move(0.1), 0.1);
        assert_eq!(Speed::Fixed(0.3).for_move(0.1), 0.3);
        assert_eq!(Speed::Fixed(0.3).for_move(1.0), 0.3);
    }

    #[test]
    fn only_moves_to_or_from_a_lying_posture_lie_down_or_get_up() {
        assert!(lies_down_or_gets_up(SIT.torso, LYING_BACK.torso));
        assert!(lies_down_or_gets_up(LYING_BELLY.torso, CROUCH.torso));
        assert!(lies_down_or_gets_up(Torso::Back, Torso::Back), "turning over on the ground");
        assert!(!lies_down_or_gets_up(CROUCH.torso, SIT.torso));
        assert!(!lies_down_or_gets_up(SIT.torso, SIT_RELAX.torso));
    }
}
