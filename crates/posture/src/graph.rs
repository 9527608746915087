//! Which posture reaches which directly, and the path `goToPosture` takes through the safe
//! intermediate postures: the shortest in this graph (docs/posture.md, "Paths").

use crate::library::{
    Posture, CROUCH, LIBRARY, LYING_BACK, LYING_BELLY, SIT, SIT_RELAX, STAND, STAND_INIT, STAND_ZERO,
};

/// Postures that reach each other directly, both ways. StandInit is the hub of the standing
/// postures and Crouch the way down to the ground, as NAOqi goes: Sit → Crouch → StandInit →
/// Stand. A robot lies on its back from Sit and on its belly from Crouch.
const EDGES: [(&Posture, &Posture); 7] = [
    (&STAND_INIT, &STAND),
    (&STAND_INIT, &STAND_ZERO),
    (&STAND_INIT, &CROUCH),
    (&CROUCH, &SIT),
    (&SIT, &SIT_RELAX),
    (&SIT, &LYING_BACK),
    (&CROUCH, &LYING_BELLY),
];

fn index_of(posture: &Posture) -> usize {
    LIBRARY.iter().position(|known| known.name == posture.name).expect("a library posture")
}

fn neighbours(posture: usize) -> impl Iterator<Item = usize> {
    EDGES.iter().filter_map(move |(a, b)| {
        let (a, b) = (index_of(a), index_of(b));
        if a == posture {
            Some(b)
        } else if b == posture {
            Some(a)
        } else {
            None
        }
    })
}

/// The postures from `from` to `to`, both included, by the fewest direct moves; `[to]` when
/// they are the same posture. Every library posture reaches every other.
pub fn path(from: &Posture, to: &Posture) -> Vec<&'static Posture> {
    let (start, goal) = (index_of(from), index_of(to));
    let mut previous: [Option<usize>; LIBRARY.len()] = [None; LIBRARY.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    previous[start] = Some(start);
    while let Some(node) = queue.pop_front() {
        if node == goal {
            break;
        }
        for next in neighbours(node) {
            if previous[next].is_none() {
                previous[next] = Some(node);
                queue.push_back(next);
            }
        }
    }
    let mut reversed = vec![goal];
    let mut node = goal;
    while node != start {
        node = previous[node].expect("the posture graph is connected");
        reversed.push(node);
    }
    reversed.into_iter().rev().map(|index| LIBRARY[index]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(postures: &[&Posture]) -> Vec<&'static str> {
        postures.iter().map(|posture| posture.name).collect()
    }

    #[test]
    fn sitting_stands_up_through_crouch_and_stand_init() {
        assert_eq!(names(&path(&SIT, &STAND)), ["Sit", "Crouch", "StandInit", "Stand"]);
        assert_eq!(names(&path(&STAND, &SIT_RELAX)), ["Stand", "StandInit", "Crouch", "Sit", "SitRelax"]);
        assert_eq!(names(&path(&LYING_BACK, &STAND_INIT)), ["LyingBack", "Sit", "Crouch", "StandInit"]);
        assert_eq!(
            names(&path(&STAND_ZERO, &LYING_BELLY)),
            ["StandZero", "StandInit", "Crouch", "LyingBelly"]
        );
    }

    #[test]
    fn a_posture_reaches_itself_in_one_step_and_every_other_one() {
        for from in LIBRARY {
            assert_eq!(names(&path(from, from)), [from.name]);
            for to in LIBRARY {
                let steps = path(from, to);
                assert_eq!((steps[0].name, steps[steps.len() - 1].name), (from.name, to.name));
                for pair in steps.windows(2) {
                    let direct = EDGES.iter().any(|(a, b)| {
                        (a.name, b.name) == (pair[0].name, pair[1].name)
                            || (b.name, a.name) == (pair[0].name, pair[1].name)
                    });
                    assert!(direct, "{} → {} is not a direct move", pair[0].name, pair[1].name);
                }
            }
        }
    }

    #[test]
    fn paths_are_the_same_both_ways() {
        for from in LIBRARY {
            for to in LIBRARY {
                let mut back = names(&path(to, from));
                back.reverse();
                assert_eq!(names(&path(from, to)), back);
            }
        }
    }
}
