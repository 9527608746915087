//! Proof that a walk cycle never allocates: the motion thread runs one every cycle.

use naobroker_alloc_counter::{counted, start_counting, Counting};
use naobroker_kinematics::Model;
use naobroker_walk::{LegGeometry, Step, Walk, WalkParameters, WalkSensors};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn starting_walking_turning_and_stopping_do_not_allocate() {
    let geometry = LegGeometry::from_model(&Model::nao_v6()).unwrap();
    let mut walk = Walk::new(geometry, WalkParameters::default());
    let stance = walk.stance();
    start_counting();
    walk.start(stance);
    let mut sensors = WalkSensors { foot_weight_kg: [2.5, 2.5], gyroscope: [0.1, -0.2, 0.3] };
    for cycle in 0..500 {
        if cycle == 100 {
            walk.request(Step { forward: 0.05, left: 0.01, turn: 0.2 });
        }
        if cycle == 400 {
            walk.request(Step::ZERO);
        }
        sensors.foot_weight_kg.reverse();
        walk.cycle(0.012, &sensors);
    }
    walk.kill();
    assert_eq!(counted(), 0);
}
