//! The hasher of the maps every call or event looks up (clients by id, modules by name, a
//! module's methods, the per-module counters, an event's subscribers; ALMemory's keys and
//! accounts): aHash with keys drawn at random per map, instead of the standard library's
//! SipHash-1-3.
//!
//! Their keys are chosen by clients: a ZeroMQ peer names itself in its handshake (the
//! `Identity` property), a client registers modules under names of its own. So the hasher
//! must stay HashDoS-resistant: keys that collide cannot be computed without the random
//! keys, which aHash's `RandomState` draws from the operating system (its documented
//! purpose: DoS resistance at a fraction of SipHash's cost). SipHash cost the broker's
//! thread about 290 instructions a lookup, eight such lookups per call (callgrind).

use std::collections::HashMap;

/// The hasher of a map whose keys clients may choose, as the module comment says.
pub type KeyedHasher = ahash::RandomState;

/// A map whose keys clients may choose, hashed as the module comment says.
pub type KeyedMap<K, V> = HashMap<K, V, KeyedHasher>;
