//! The motion thread's Cartesian data for the API side: a seqlock over preallocated
//! atomics. The motion thread, the only writer, makes the sequence odd, stores every value,
//! and makes it even again; a reader reads the sequence, the values, the sequence again,
//! and starts over when the two differ or the first was odd. So a reader never sees a torn
//! transform or a sensed pose of one cycle beside a commanded pose of another, and the
//! writer never waits, locks or allocates (Boehm, "Can seqlocks get along with programming
//! language memory models?", 2012: the fences below).

use std::sync::atomic::{fence, AtomicU64, Ordering};

use naobroker_kinematics::Transform;

use super::{CartesianPose, Kinematics, Source};

/// A transform's 12 numbers: rotation row-major, then translation.
const TRANSFORM: usize = 12;

pub struct Published {
    /// Odd while the motion thread writes.
    sequence: AtomicU64,
    /// Per source (commanded, sensed): every frame's transform in FRAME_TORSO, every part's
    /// centre of mass in FRAME_TORSO, FRAME_TORSO in FRAME_ROBOT.
    values: Box<[AtomicU64]>,
    frames: usize,
    parts: usize,
}

impl Published {
    /// Room for `kinematics`' frames and parts, all zero until the first `write`.
    pub fn new(kinematics: &Kinematics) -> Published {
        let (frames, parts) = (kinematics.frames().len(), kinematics.parts().len());
        let per_source = per_source(frames, parts);
        Published {
            sequence: AtomicU64::new(0),
            values: (0..2 * per_source).map(|_| AtomicU64::new(0)).collect(),
            frames,
            parts,
        }
    }

    /// Publish both models' data. Only one thread may write (the motion thread: the
    /// `MotionCycle` owns the call); it never waits.
    pub fn write(&self, kinematics: &Kinematics, commanded: &CartesianPose<'_>, sensed: &CartesianPose<'_>) {
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(sequence.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        for (source, data) in [(Source::Commanded, commanded), (Source::Sensed, sensed)] {
            let mut at = self.base(source);
            for &frame in kinematics.frames() {
                self.store_transform(&mut at, &data.pose.transform(frame));
            }
            for &part in kinematics.parts() {
                for value in data.pose.com(&kinematics.model, part) {
                    self.store(&mut at, value);
                }
            }
            self.store_transform(&mut at, &data.torso_in_robot);
        }
        self.sequence.store(sequence.wrapping_add(2), Ordering::Release);
    }

    /// Read a consistent snapshot through `read`, which is called again (from the start)
    /// when the motion thread wrote meanwhile.
    pub fn read<T>(&self, read: impl Fn(&Snapshot<'_>) -> T) -> T {
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before.is_multiple_of(2) {
                let value = read(&Snapshot { published: self });
                fence(Ordering::Acquire);
                if self.sequence.load(Ordering::Relaxed) == before {
                    return value;
                }
            }
            std::hint::spin_loop();
        }
    }

    fn base(&self, source: Source) -> usize {
        source as usize * per_source(self.frames, self.parts)
    }

    fn store(&self, at: &mut usize, value: f64) {
        self.values[*at].store(value.to_bits(), Ordering::Relaxed);
        *at += 1;
    }

    fn store_transform(&self, at: &mut usize, transform: &Transform) {
        for &value in transform.rotation.iter().flatten().chain(&transform.translation) {
            self.store(at, value);
        }
    }

    fn load(&self, at: usize) -> f64 {
        f64::from_bits(self.values[at].load(Ordering::Relaxed))
    }

    fn load_transform(&self, at: usize) -> Transform {
        let value = |offset: usize| self.load(at + offset);
        Transform {
            rotation: [0, 1, 2].map(|row| [0, 1, 2].map(|column| value(3 * row + column))),
            translation: [9, 10, 11].map(value),
        }
    }
}

fn per_source(frames: usize, parts: usize) -> usize {
    TRANSFORM * frames + 3 * parts + TRANSFORM
}

/// The published values, while [`Published::read`] reads them.
pub struct Snapshot<'a> {
    published: &'a Published,
}

impl Snapshot<'_> {
    /// A frame's transform in FRAME_TORSO, by its slot ([`Kinematics::frame_slot`]).
    pub fn transform(&self, source: Source, frame_slot: usize) -> Transform {
        let published = self.published;
        published.load_transform(published.base(source) + TRANSFORM * frame_slot)
    }

    /// A part's centre of mass in FRAME_TORSO, by its slot ([`Kinematics::part_slot`]).
    pub fn com(&self, source: Source, part_slot: usize) -> [f64; 3] {
        let published = self.published;
        let at = published.base(source) + TRANSFORM * published.frames + 3 * part_slot;
        [0, 1, 2].map(|offset| published.load(at + offset))
    }

    /// FRAME_TORSO in FRAME_ROBOT.
    pub fn torso_in_robot(&self, source: Source) -> Transform {
        let published = self.published;
        let at = published.base(source) + TRANSFORM * published.frames + 3 * published.parts;
        published.load_transform(at)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use naobroker_kinematics::{Model, Pose};

    use super::*;

    fn kinematics() -> Arc<Kinematics> {
        Arc::new(Kinematics::new(Model::nao_v6(), |_| None))
    }

    #[test]
    fn what_is_written_is_read_back_per_source() {
        let kinematics = kinematics();
        let model = &kinematics.model;
        let published = Published::new(&kinematics);
        let mut bent = Pose::new(model);
        let mut angles = vec![0.0; model.joint_names().len()];
        angles[model.joint_index("LShoulderPitch").unwrap()] = 0.7;
        bent.update(model, &angles);
        let straight = Pose::new(model);
        let robot = Transform::translation([0.01, 0.02, 0.3]);
        published.write(
            &kinematics,
            &CartesianPose { pose: &straight, torso_in_robot: Transform::IDENTITY },
            &CartesianPose { pose: &bent, torso_in_robot: robot },
        );
        let hand = kinematics.frame_slot("LArm").unwrap();
        let hand_frame = model.frame("LArm").unwrap();
        let body = kinematics.part_slot("Body").unwrap();
        published.read(|snapshot| {
            assert_eq!(snapshot.transform(Source::Sensed, hand), bent.transform(hand_frame));
            assert_eq!(snapshot.transform(Source::Commanded, hand), straight.transform(hand_frame));
            assert_eq!(snapshot.com(Source::Sensed, body), bent.com(model, naobroker_kinematics::Part::Body));
            assert_eq!(snapshot.torso_in_robot(Source::Sensed), robot);
            assert_eq!(snapshot.torso_in_robot(Source::Commanded), Transform::IDENTITY);
        });
    }

    #[test]
    fn a_reader_never_sees_a_torn_snapshot_while_the_writer_goes_on() {
        let kinematics = kinematics();
        let published = Arc::new(Published::new(&kinematics));
        let model = &kinematics.model;
        let pose = Pose::new(model);
        let writer = {
            let (kinematics, published) = (Arc::clone(&kinematics), Arc::clone(&published));
            std::thread::spawn(move || {
                // Every value of a write carries the same number: the translation's x.
                for round in 1..=20_000u32 {
                    let torso_in_robot = Transform::translation([f64::from(round), 0.0, 0.0]);
                    let data = CartesianPose { pose: &pose, torso_in_robot };
                    published.write(&kinematics, &data, &data);
                }
            })
        };
        let mut last = 0.0;
        while !writer.is_finished() {
            let (commanded, sensed) = published.read(|snapshot| {
                (snapshot.torso_in_robot(Source::Commanded), snapshot.torso_in_robot(Source::Sensed))
            });
            assert_eq!(commanded, sensed, "one write's values together");
            assert!(commanded.translation[0] >= last, "never older than what was read before");
            last = commanded.translation[0];
        }
        writer.join().unwrap();
        assert_eq!(published.read(|s| s.torso_in_robot(Source::Sensed).translation[0]), 20_000.0);
    }
}
