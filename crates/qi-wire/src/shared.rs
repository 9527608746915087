//! What every qi connection of one broker shares: the broker, the service table, what every
//! subscriber object offers, the machine's identity, the codec's bounds and the wire's
//! counters.

use std::cell::{Cell, RefCell};
use std::hash::{BuildHasher, Hasher, RandomState};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use naobroker_framework::wire::WeakPort;
use naobroker_framework::wire::WirePort;
use naobroker_framework::UnfinishedBudget;
use naobroker_qi::Limits;

use crate::methods::ObjectTable;
use crate::services::Services;

/// Who this broker is to qi clients: libqi reuses the ServiceDirectory's socket for a service
/// whose machine id is the directory's.
pub(crate) struct Identity {
    pub(crate) machine_id: String,
    pub(crate) session_id: String,
    pub(crate) process_id: u32,
    /// The first 8 bytes of every object uid this broker hands out.
    pub(crate) uid_seed: [u8; 8],
}

fn random_u64() -> u64 {
    RandomState::new().build_hasher().finish()
}

/// A random version-4 UUID as text.
fn uuid() -> String {
    let (high, low) = (random_u64(), random_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0x0fff,
        0x8000 | (low >> 48) & 0x3fff,
        low & 0xffff_ffff_ffff
    )
}

impl Identity {
    fn new() -> Identity {
        Identity {
            machine_id: uuid(),
            session_id: uuid(),
            process_id: std::process::id(),
            uid_seed: random_u64().to_le_bytes(),
        }
    }
}

/// Counters of what the wire refused before the broker saw it, for `ServiceDirectory.stats`.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) connections: Cell<u64>,
    pub(crate) bad_headers: Cell<u64>,
    pub(crate) oversized_frames: Cell<u64>,
    pub(crate) stalled_frames: Cell<u64>,
}

pub(crate) fn bump(counter: &Cell<u64>) {
    counter.set(counter.get() + 1);
}

pub(crate) struct Shared {
    pub(crate) broker: WeakPort,
    pub(crate) services: RefCell<Services>,
    /// What every subscriber object offers.
    pub(crate) subscriber: Rc<ObjectTable>,
    pub(crate) identity: Identity,
    pub(crate) counters: Counters,
    /// The codec's bounds, from the broker's limits.
    pub(crate) limits: Limits,
    pub(crate) max_frame_bytes: u32,
    /// The broker's budget of bytes held for unfinished messages, over every wire.
    pub(crate) unfinished: Arc<UnfinishedBudget>,
    pub(crate) stall_timeout: Duration,
}

impl Shared {
    /// The state of a listener on `broker`, its modules services from 2 by name.
    pub(crate) fn new(broker: &WirePort) -> Shared {
        let limits = broker.limits();
        let mut services = Services::default();
        for module in broker.module_names() {
            services.add(&module);
        }
        Shared {
            broker: broker.downgrade(),
            services: RefCell::new(services),
            subscriber: Rc::new(ObjectTable::subscriber()),
            identity: Identity::new(),
            counters: Counters::default(),
            // A naobroker array is a `[m]` of dynamic values: two levels of qi per level of
            // nesting, and room for the arguments' tuple around it (the codec's own default).
            limits: Limits { max_depth: 2 * limits.max_value_depth + 4, ..Limits::default() },
            max_frame_bytes: u32::try_from(limits.max_frame_bytes).unwrap_or(u32::MAX),
            unfinished: Arc::clone(broker.unfinished_budget()),
            stall_timeout: limits.stall_timeout(),
        }
    }
}
