//! The producers' request channels into the cycle thread, named: each producing thread
//! (the DCM module's actor, the motion thread) owns one, and checks its requests before they
//! go, so that the cycle never refuses one for want of room.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use naobroker_robot::device::{Conversion, DeviceIndex, DeviceModel};

use super::admission::Admission;
use super::queued::Queued;
use super::{ChannelError, ClockMode, CycleContext, Hook, Phase, Returned, Shared, ToCycle};
use crate::core::{LengthChange, Overflow, Request};

/// The cycle's end of a producer's channel: its messages in, what is handed back out.
pub(super) type Inbound = (rtrb::Consumer<ToCycle>, rtrb::Producer<Returned>);

/// The channels of the producers named in
/// [`CycleConfig::producers`](super::CycleConfig::producers), each taken once.
pub struct RequestChannels {
    channels: Vec<(&'static str, Option<RequestChannel>)>,
}

/// A producer [`CycleConfig::producers`](super::CycleConfig::producers) does not name, or
/// whose channel was taken already.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the DCM cycle has no request channel for {0:?} (not a configured producer, or taken already)")]
pub struct UnknownProducer(pub String);

impl RequestChannels {
    pub(super) fn new(channels: Vec<(&'static str, RequestChannel)>) -> RequestChannels {
        RequestChannels {
            channels: channels.into_iter().map(|(name, channel)| (name, Some(channel))).collect(),
        }
    }

    /// The channel of `producer`, a name in [`CycleConfig::producers`](super::CycleConfig::producers).
    pub fn take(&mut self, producer: &str) -> Result<RequestChannel, UnknownProducer> {
        self.channels
            .iter_mut()
            .find(|(name, _)| *name == producer)
            .and_then(|(_, channel)| channel.take())
            .ok_or_else(|| UnknownProducer(producer.to_owned()))
    }
}

/// One producer's queue into the cycle thread. Owned by one thread at a time.
pub struct RequestChannel {
    /// Its number among the producers ([`CycleConfig::producers`](super::CycleConfig::producers)).
    producer: usize,
    to_cycle: rtrb::Producer<ToCycle>,
    returned: rtrb::Consumer<Returned>,
    /// This producer's requests the cycle has not applied yet.
    queued: Queued,
    /// Per-actuator counts for checking a request, allocated once.
    admission: Admission,
    /// A request's length changes while it is sent, allocated once.
    changes: Vec<(usize, LengthChange)>,
    /// Requests the cycle gave back, emptied, for [`RequestChannel::reusable_request`]: at
    /// most as many as [`RequestChannel::keep_requests`] asked for; the others are freed.
    /// Boxed on purpose: the boxes travel to the cycle and back, never reallocated.
    #[allow(clippy::vec_box)]
    spare_requests: Vec<Box<Request>>,
    shared: Arc<Shared>,
    model: Arc<DeviceModel>,
    /// Each actuator's full name, made once: a refusal names its actuator without allocating.
    actuator_names: Vec<Arc<str>>,
    /// Names of the hooks added through this channel, by id, for `DCM.stats`.
    hook_names: Vec<(u32, String)>,
}

impl RequestChannel {
    /// Producer number `producer`'s channel, its queues holding `capacity` messages.
    pub(super) fn new(
        producer: usize,
        capacity: usize,
        shared: &Arc<Shared>,
        model: &Arc<DeviceModel>,
    ) -> (RequestChannel, Inbound) {
        let (to_cycle, from_producer) = rtrb::RingBuffer::new(capacity);
        let (to_producer, returned) = rtrb::RingBuffer::new(capacity);
        let actuators = model.actuators.len();
        let channel = RequestChannel {
            producer,
            to_cycle,
            returned,
            queued: Queued::with_capacity(capacity, 4 * actuators),
            admission: Admission::new(actuators),
            // A client's request names an actuator at most 4 times (aliases).
            changes: Vec::with_capacity(4 * actuators),
            spare_requests: Vec::new(),
            shared: Arc::clone(shared),
            model: Arc::clone(model),
            actuator_names: model.actuators.iter().map(|actuator| actuator.full_name().into()).collect(),
            hook_names: Vec::new(),
        };
        (channel, (from_producer, to_producer))
    }

    /// Take back what the cycle returned: requests to reuse while there is room for them,
    /// the rest freed here.
    fn take_returned(&mut self) {
        while let Ok(returned) = self.returned.pop() {
            if let Returned::Request(request) = returned {
                self.keep_spare(request);
            }
        }
    }

    /// Keep up to `count` of the requests the cycle gives back for
    /// [`RequestChannel::reusable_request`], and make them now, each with room for `groups`
    /// one-command groups: a producer sending one such request per cycle (the motion thread)
    /// then allocates nothing while the cycle keeps up.
    pub fn keep_requests(&mut self, count: usize, groups: usize) {
        self.spare_requests = Vec::with_capacity(count);
        self.spare_requests.extend((0..count).map(|_| Box::new(Request::with_capacity(groups))));
    }

    /// An empty request to fill and send: one the cycle gave back when there is one
    /// ([`RequestChannel::keep_requests`]), a new one otherwise.
    pub fn reusable_request(&mut self) -> Box<Request> {
        self.take_returned();
        self.spare_requests.pop().unwrap_or_default()
    }

    fn push(&mut self, message: ToCycle) -> Result<(), ChannelError> {
        self.push_or_give_back(message).map_err(|_| ChannelError::QueueFull)
    }

    /// Queue `message`, or give it back when the queue is full.
    fn push_or_give_back(&mut self, message: ToCycle) -> Result<(), ToCycle> {
        // Taking back what the cycle returned first keeps queue + returns within capacity,
        // so the cycle thread can always hand its boxes back.
        self.take_returned();
        self.to_cycle.push(message).map_err(|rtrb::PushError::Full(message)| message)?;
        if self.shared.clock == ClockMode::Manual {
            self.shared.wake();
        }
        Ok(())
    }

    /// Keep a request, emptied, for [`RequestChannel::reusable_request`] while there is room
    /// (the cycle gave it back, or it was refused: a producer on a real-time thread then
    /// neither frees nor allocates); free it otherwise.
    fn keep_spare(&mut self, mut request: Box<Request>) {
        if self.spare_requests.len() < self.spare_requests.capacity() {
            request.clear();
            self.spare_requests.push(request);
        }
    }

    /// Queue a validated request; refused whole when a buffer could overflow at any step
    /// of applying it. The bound counts the buffer as last published, this producer's
    /// queued requests in order (a queued `ClearAll` empties it), the request's own
    /// groups in order (its `ClearAll` counts only what it brings), and other producers'
    /// queued commands as if they came after: never fewer than the cycle will hold.
    /// Accepted, it allocates nothing (its length changes go into storage reserved at
    /// start); refused, the request is kept for reuse (or freed when no room is kept for it)
    /// and the error says why.
    pub fn send(&mut self, request: impl Into<Box<Request>>) -> Result<(), ChannelError> {
        let request = request.into();
        let actuators = self.model.actuators.len();
        if let Some(group) = request.groups().iter().find(|group| group.actuator >= actuators) {
            return Err(ChannelError::NoActuator { actuator: group.actuator, actuators });
        }
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        changes.extend(
            request
                .groups()
                .iter()
                .map(|group| (group.actuator, LengthChange::of(group.update, group.commands.len()))),
        );
        // Reserved before checking (sequentially consistent): of two producers checking at
        // once, at least one sees the other's commands.
        self.reserve(&changes, true);
        let checked = match self.check(&changes) {
            Ok(()) => self.push_or_give_back(ToCycle::Apply(request)).map_err(|message| {
                if let ToCycle::Apply(request) = message {
                    self.keep_spare(request);
                }
                ChannelError::QueueFull
            }),
            Err(overflow) => {
                self.keep_spare(request);
                Err(overflow)
            }
        };
        match checked {
            Ok(()) => self.queued.push(&changes),
            Err(_) => self.reserve(&changes, false),
        }
        self.changes = changes;
        checked
    }

    /// Add (or take back) this producer's queued counts for other producers to see.
    fn reserve(&self, changes: &[(usize, LengthChange)], add: bool) {
        for &(actuator, change) in changes {
            let slot = self.shared.queued_slot(self.producer, actuator);
            let count = change.count() as u32;
            if add {
                slot.fetch_add(count, Ordering::SeqCst);
            } else {
                slot.fetch_sub(count, Ordering::SeqCst);
            }
        }
    }

    fn check(&mut self, changes: &[(usize, LengthChange)]) -> Result<(), ChannelError> {
        self.queued.forget_applied(self.shared.applied[self.producer].load(Ordering::SeqCst));
        self.admission.check(&self.shared, self.producer, &self.queued, changes).map_err(|refusal| {
            ChannelError::Overflow(Overflow {
                actuator: Arc::clone(&self.actuator_names[refusal.actuator]),
                would_hold: refusal.would_hold,
                capacity: self.shared.capacity,
            })
        })
    }

    pub fn force_sensor(&mut self, sensor: usize, value: Option<f64>) -> Result<(), ChannelError> {
        let sensors = self.model.sensors.len();
        if sensor >= sensors {
            return Err(ChannelError::NoSensor { sensor, sensors });
        }
        self.push(ToCycle::ForceSensor { sensor, value })
    }

    /// Change devices' gains and offsets in the cycle: ALMemory's `.../Gain`, `.../Offset`
    /// and a sensor's `.../Value` change together when the cycle takes them, at its next
    /// cycle at the latest.
    pub fn set_conversions(
        &mut self,
        conversions: Vec<(DeviceIndex, Conversion)>,
    ) -> Result<(), ChannelError> {
        let (actuators, sensors) = (self.model.actuators.len(), self.model.sensors.len());
        let unknown = conversions.iter().find(|(device, _)| match *device {
            DeviceIndex::Actuator(index) => index >= actuators,
            DeviceIndex::Sensor(index) => index >= sensors,
        });
        if let Some(&(device, _)) = unknown {
            return Err(ChannelError::NoDevice(device));
        }
        self.push(ToCycle::Conversions(conversions.into_boxed_slice()))
    }

    pub fn reset(&mut self) -> Result<(), ChannelError> {
        self.push(ToCycle::Reset)
    }

    /// Run `callback` on the cycle thread at every cycle. Returns the hook's id, unique
    /// among every channel's hooks.
    pub fn add_hook(
        &mut self,
        phase: Phase,
        name: &str,
        callback: Box<dyn FnMut(&mut CycleContext<'_>) + Send>,
    ) -> Result<u32, ChannelError> {
        let id = self.shared.new_hook_id();
        self.push(ToCycle::AddHook(Box::new(Hook::new(id, phase, callback))))?;
        self.hook_names.push((id, name.to_owned()));
        Ok(id)
    }

    pub fn remove_hook(&mut self, id: u32) -> Result<(), ChannelError> {
        self.push(ToCycle::RemoveHook(id))?;
        self.hook_names.retain(|(hook, _)| *hook != id);
        Ok(())
    }

    /// `(id, name)` of the hooks added through this channel and not removed.
    pub fn hook_names(&self) -> &[(u32, String)] {
        &self.hook_names
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub fn model(&self) -> &Arc<DeviceModel> {
        &self.model
    }
}
