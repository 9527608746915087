//! One motion cycle on the motion thread, as the scaffold runs it: take in the API's
//! commands, run the engine, send its request to the DCM, publish positions and stiffness,
//! report, hand the ended tasks back.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use naobroker_dcm::core::Request;
use naobroker_dcm::cycle::RequestChannel;
use naobroker_rt::{Cycle, Tick};

use super::reports::Reports;
use super::{MotionShared, COMMAND_QUEUE};
use crate::engine::{Engine, EngineOutput, MotionTask, ToEngine};

/// The motion thread's work, for [`super::spawn`]. Everything it uses was allocated by
/// [`super::prepare`].
pub struct MotionCycle {
    engine: Engine,
    channel: RequestChannel,
    incoming: rtrb::Consumer<ToEngine>,
    retire: rtrb::Producer<Box<MotionTask>>,
    reports: Reports,
    output: EngineOutput,
    /// The request the last cycle did not send (it held no command), to fill next.
    unsent: Option<Box<Request>>,
    shared: Arc<MotionShared>,
    requested_time: Arc<AtomicI32>,
    /// Commands taken in so far.
    taken: u64,
}

impl MotionCycle {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        engine: Engine,
        channel: RequestChannel,
        incoming: rtrb::Consumer<ToEngine>,
        retire: rtrb::Producer<Box<MotionTask>>,
        reports: Reports,
        output: EngineOutput,
        shared: Arc<MotionShared>,
        requested_time: Arc<AtomicI32>,
    ) -> MotionCycle {
        MotionCycle {
            engine,
            channel,
            incoming,
            retire,
            reports,
            output,
            unsent: None,
            shared,
            requested_time,
            taken: 0,
        }
    }

    fn send_request(&mut self, request: Box<Request>) {
        if request.groups().is_empty() {
            self.unsent = Some(request);
        } else if self.channel.send(request).is_err() {
            self.shared.refused.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn publish(&self) {
        let shared = &self.shared;
        for motor in 0..shared.positions.len() {
            shared.positions[motor].store(self.engine.position(motor).to_bits(), Ordering::Release);
            let stiffness = self.engine.commanded_stiffness(motor);
            shared.stiffnesses[motor].store(stiffness.to_bits(), Ordering::Release);
        }
        if let Some(cartesian) = &shared.cartesian {
            self.engine.publish_cartesian(cartesian);
        }
        shared.applied.store(self.taken, Ordering::Release);
        shared.collision_stops.store(self.engine.collision_stops(), Ordering::Relaxed);
        shared.cycles.fetch_add(1, Ordering::AcqRel);
    }

    /// The ended tasks go back to the API side to be freed there.
    fn retire_ended(&mut self) {
        for task in self.output.retired.drain(..) {
            if let Err(rtrb::PushError::Full(task)) = self.retire.push(task) {
                // Cannot happen while the API frees ended tasks before queuing a command
                // (see `Commands::push`); leaking beats freeing on this thread.
                std::mem::forget(task);
            }
        }
    }
}

impl Cycle for MotionCycle {
    fn run(&mut self, tick: Tick) {
        if tick.skipped > 0 {
            self.shared.skipped.fetch_add(tick.skipped, Ordering::Relaxed);
        }
        let time = self.requested_time.load(Ordering::Acquire);
        // preProcess before anything of the cycle, its sensors included; the API raises it
        // while the cycle runs.
        let dropped = self.reports.pre_process(self.engine.cycles() + 1, time);
        self.reports.wake();
        // At most a queue's worth per cycle, the bound `output` was sized for.
        for _ in 0..COMMAND_QUEUE {
            let Ok(command) = self.incoming.pop() else { break };
            self.taken += 1;
            self.engine.command(command, &mut self.output);
        }
        let mut request = self.unsent.take().unwrap_or_else(|| self.channel.reusable_request());
        self.engine.cycle(time, &mut request, &mut self.output);
        self.send_request(request);
        self.publish();
        let dropped = dropped + self.reports.send(&mut self.output.reports);
        if dropped > 0 {
            self.shared.reports_dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.retire_ended();
        self.reports.wake();
    }
}
