//! The Zenoh adapter's bounds: what the network may ask of the broker, and what a
//! configuration may ask of the adapter.

/// Queries (memory reads and calls) waiting for the adapter's query thread; past it a query
/// is answered "busy" at once and counted.
pub const QUERY_QUEUE: usize = 256;
/// Events waiting to be put on the network; past it an event is dropped and counted.
pub const EVENT_QUEUE: usize = 1024;
/// The bytes of the values of the events waiting (their MessagePack size); past it an event
/// is dropped and counted.
pub const EVENT_QUEUE_BYTES: usize = 8 * 1024 * 1024;
/// Calls from the network under way in the broker at once; past it a call is answered "busy".
pub const MAX_CALLS_IN_FLIGHT: usize = 64;
/// How long a call from the network holds its place: past it the caller is answered "timed
/// out" and the place is free (the broker's own per-client `max_calls_in_flight` still bounds
/// the calls that go on running).
pub const CALL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);
/// Keys one memory query may answer; a query matching more is refused with this number.
pub const MAX_MEMORY_REPLIES: usize = 10_000;
/// The largest query payload (a call's JSON arguments), in bytes: a larger one is refused by
/// the session's callback, never queued (the query queue holds at most 16 MiB of payloads).
pub const MAX_CALL_PAYLOAD_BYTES: usize = 65_536;
/// The largest message the adapter's Zenoh session receives, in bytes: a larger one is not
/// read (Zenoh's own `transport/link/rx/max_message_size`, 1 GiB by default).
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;
/// Events and method patterns a configuration may list, each.
pub const MAX_LISTED: usize = 256;
/// The fastest real-time values are published, per second (the DCM's cycle is slower or
/// equal: at most one put per key and cycle).
pub const MAX_RATE_HZ: f64 = 1000.0;
/// The bytes of the values one memory query may answer; a query for more is refused whole.
pub const MAX_MEMORY_REPLY_BYTES: usize = 16 * 1024 * 1024;
/// The largest ROS domain (`ROS_DOMAIN_ID`: ROS 2 takes 0 to 232).
pub const MAX_DOMAIN_ID: u32 = 232;
