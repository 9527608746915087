//! The viewers' door: the live view's advertised port, in front of the SDK's server, which
//! listens on a loopback port of its own. The SDK (0.30.3) accepts every connection and drops
//! a slow client's oldest messages without counting them (its only trace is a log line at most
//! every 30 s); so the door refuses a viewer beyond `[foxglove] max_viewers` with the reason,
//! and relays each viewer's WebSocket frames through a queue of its own, reading the SDK's side
//! as fast as it writes: what a slow viewer loses is lost here, and counted per viewer.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::SinkExt;
use naobroker_framework::Value;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::server::{Callback, ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

use crate::bounds::{MAX_FRAME_BYTES, MAX_VIEWER_MESSAGE_BYTES, VIEWER_QUEUE_BYTES};
use crate::robot::ROBOT_DESCRIPTION;

/// Refusals under way at once at most (each a WebSocket handshake, a status and a close);
/// connections beyond the bound that come faster are closed without a word.
const REFUSING_AT_ONCE: usize = 4;
/// How long a refused viewer's handshake and farewell may take.
const REFUSAL_PATIENCE: Duration = Duration::from_secs(2);
/// How long a viewer may take to complete the WebSocket handshake before its place is given
/// up (a connection that sends nothing would hold it forever).
const HANDSHAKE_PATIENCE: Duration = Duration::from_secs(5);
/// How long what the server sent before it closed may take to reach the viewer.
const FAREWELL_PATIENCE: Duration = Duration::from_secs(1);
/// TCP keepalive on a viewer's socket: a peer whose machine vanished is found by the kernel's
/// probes even while nothing is sent to it (idle time, then probes a few seconds apart).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_PROBES: u32 = 3;
/// How the server's answer starts when it accepts the handshake.
const SWITCHING_PROTOCOLS: &[u8] = b"HTTP/1.1 101 ";
/// The longest HTTP answer to the handshake the server may send.
const MAX_HANDSHAKE_BYTES: usize = 16 * 1024;
/// What is read from a socket at a time.
const CHUNK_BYTES: usize = 64 * 1024;
/// A message data frame's opcode (binary, final) and the Foxglove protocol's opcode for
/// message data, its payload's first byte: the only frames a slow viewer may lose.
const BINARY_FINAL: u8 = 0x82;
/// A whole text frame: the protocol's JSON messages.
const TEXT_FINAL: u8 = 0x81;
const MESSAGE_DATA: u8 = 0x01;

/// What the door counts of one viewer.
#[derive(Debug)]
pub(crate) struct ViewerCounters {
    address: SocketAddr,
    /// Messages written to the viewer's socket.
    sent: AtomicU64,
    /// Messages dropped because the viewer's queue was full.
    dropped: AtomicU64,
}

/// The viewers connected, and what the door counted of all of them.
#[derive(Debug, Default)]
pub(crate) struct Door {
    viewers: Mutex<Vec<Arc<ViewerCounters>>>,
    /// Connections refused beyond `max_viewers`.
    refused: AtomicU64,
    /// Messages dropped for viewers that have left.
    dropped_before: AtomicU64,
    /// Viewers disconnected because the protocol's own messages alone overfilled their queue.
    cut_off: AtomicU64,
}

impl Door {
    fn viewers(&self) -> MutexGuard<'_, Vec<Arc<ViewerCounters>>> {
        self.viewers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new viewer's counters, or none when `max_viewers` are connected.
    fn enter(&self, address: SocketAddr, max_viewers: usize) -> Option<Arc<ViewerCounters>> {
        let mut viewers = self.viewers();
        if viewers.len() >= max_viewers {
            return None;
        }
        let counters =
            Arc::new(ViewerCounters { address, sent: AtomicU64::new(0), dropped: AtomicU64::new(0) });
        viewers.push(Arc::clone(&counters));
        Some(counters)
    }

    /// Forget a viewer, its drops added to those of viewers gone under the same lock as
    /// [`Door::stats`] takes: a look at the stats counts them once, never twice or not at all.
    fn leave(&self, counters: &Arc<ViewerCounters>) {
        let mut viewers = self.viewers();
        viewers.retain(|viewer| !Arc::ptr_eq(viewer, counters));
        self.dropped_before.fetch_add(counters.dropped.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// `Foxglove.stats()`'s viewer part: each viewer connected (address, messages sent and
    /// dropped), the messages dropped in all (viewers gone included), refusals and cut-offs.
    pub(crate) fn stats(&self) -> Vec<(Value, Value)> {
        let viewers = self.viewers();
        let mut dropped = self.dropped_before.load(Ordering::Relaxed);
        let each: Vec<Value> = viewers
            .iter()
            .map(|viewer| {
                let viewer_dropped = viewer.dropped.load(Ordering::Relaxed);
                dropped += viewer_dropped;
                Value::Map(vec![
                    ("address".into(), viewer.address.to_string().into()),
                    ("messages_sent".into(), viewer.sent.load(Ordering::Relaxed).into()),
                    ("messages_dropped".into(), viewer_dropped.into()),
                ])
            })
            .collect();
        vec![
            ("viewers".into(), Value::Array(each)),
            ("messages_dropped".into(), dropped.into()),
            ("viewers_refused".into(), self.refused.load(Ordering::Relaxed).into()),
            ("viewers_cut_off".into(), self.cut_off.load(Ordering::Relaxed).into()),
        ]
    }
}

/// How many viewers, and how much each one's queue holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ViewerBounds {
    pub(crate) max_viewers: usize,
    pub(crate) queue_messages: usize,
    /// How long a viewer's socket may take no byte while its queue holds some before the
    /// viewer is cut off: one that stopped reading, or whose machine vanished behind something
    /// that keeps the connection open (sshd's tunnel end), would hold its place for ever.
    pub(crate) patience: Duration,
}

/// Take the viewers that come to `listener`, each relayed to the SDK's server at `server`
/// (runs until the view's runtime shuts down).
pub(crate) async fn admit(listener: TcpListener, server: SocketAddr, bounds: ViewerBounds, door: Arc<Door>) {
    let refusing = Arc::new(AtomicUsize::new(0));
    loop {
        let (viewer, address) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of file descriptors, most likely: let some go before taking more.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(counters) = door.enter(address, bounds.max_viewers) else {
            door.refused.fetch_add(1, Ordering::Relaxed);
            if refusing.fetch_add(1, Ordering::Relaxed) < REFUSING_AT_ONCE {
                let refusing = Arc::clone(&refusing);
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(REFUSAL_PATIENCE, refuse(viewer, bounds.max_viewers)).await;
                    refusing.fetch_sub(1, Ordering::Relaxed);
                });
            } else {
                refusing.fetch_sub(1, Ordering::Relaxed);
            }
            continue;
        };
        let door = Arc::clone(&door);
        tokio::spawn(async move {
            if !relay(viewer, server, &counters, bounds).await {
                door.cut_off.fetch_add(1, Ordering::Relaxed);
            }
            door.leave(&counters);
        });
    }
}

/// Why a viewer beyond the bound is refused (short enough for a WebSocket close frame).
pub(crate) fn refusal(max_viewers: usize) -> String {
    format!(
        "naobroker: {max_viewers} Foxglove viewers connected, at most {max_viewers} ([foxglove] max_viewers)"
    )
}

/// Refuse a viewer as a WebSocket peer can read it: the handshake (with Foxglove's
/// subprotocol when offered), an error status naming the bound, and a close frame "try again
/// later" with the same reason.
async fn refuse(viewer: TcpStream, max_viewers: usize) {
    let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(viewer, FoxgloveSubprotocol).await else {
        return;
    };
    let reason = refusal(max_viewers);
    let status = serde_json::json!({"op": "status", "level": 2, "message": reason}).to_string();
    let _ = socket.send(Message::Text(status.into())).await;
    let _ = socket.close(Some(CloseFrame { code: CloseCode::Again, reason: reason.into() })).await;
}

/// The handshake's answer names Foxglove's subprotocol when the viewer offers it.
struct FoxgloveSubprotocol;

impl Callback for FoxgloveSubprotocol {
    fn on_request(self, request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
        let offered = request.headers().get("sec-websocket-protocol").and_then(|value| value.to_str().ok());
        let foxglove = offered
            .and_then(|offered| offered.split(',').map(str::trim).find(|p| p.starts_with("foxglove.")));
        if let Some(Ok(protocol)) = foxglove.map(HeaderValue::from_str) {
            response.headers_mut().insert("sec-websocket-protocol", protocol);
        }
        Ok(response)
    }
}

/// Relay one viewer until either side closes; false when the viewer was cut off (no
/// handshake within [`HANDSHAKE_PATIENCE`], a frame of its own refused by [`ViewerFrames`],
/// the protocol's own messages alone overfilled its queue, or the server sent a frame beyond
/// [`MAX_FRAME_BYTES`]).
async fn relay(
    viewer: TcpStream,
    server: SocketAddr,
    counters: &ViewerCounters,
    bounds: ViewerBounds,
) -> bool {
    let Ok(server) = TcpStream::connect(server).await else { return true };
    let _ = (viewer.set_nodelay(true), server.set_nodelay(true));
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    if let Err(error) = socket2::SockRef::from(&viewer).set_tcp_keepalive(&keepalive) {
        tracing::warn!(%error, "foxglove door: cannot set a viewer's keepalive");
    }
    let (from_viewer, to_viewer) = viewer.into_split();
    let (from_server, to_server) = server.into_split();
    let watch = DescriptionWatch::default();
    tokio::select! {
        kept = copy(from_viewer, to_server, &watch) => kept,
        kept = forward(from_server, to_viewer, counters, bounds, &watch) => kept,
    }
}

/// The viewer's requests to the server: its HTTP handshake, then whole WebSocket frames once
/// [`ViewerFrames`] has checked them. False when the viewer was cut off for a frame beyond them.
async fn copy(from: OwnedReadHalf, to: OwnedWriteHalf, watch: &DescriptionWatch) -> bool {
    let mut incoming: Vec<u8> = Vec::with_capacity(CHUNK_BYTES);
    let mut chunk = vec![0; CHUNK_BYTES];
    let mut frames = ViewerFrames::default();
    loop {
        if from.readable().await.is_err() {
            return true;
        }
        match from.try_read(&mut chunk) {
            Ok(0) => return true,
            Ok(read) => incoming.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == ErrorKind::WouldBlock => continue,
            Err(_) => return true,
        }
        // What is held is at most a handshake or a frame being read, each bounded, and a chunk.
        let Ok(taken) = frames.take(&incoming) else { return false };
        for text in frames.texts.drain(..) {
            watch.viewer_text(&text);
        }
        let mut rest = &incoming[..taken];
        while !rest.is_empty() {
            if to.writable().await.is_err() {
                return true;
            }
            match to.try_write(rest) {
                Ok(written) => rest = &rest[written..],
                Err(error) if error.kind() == ErrorKind::WouldBlock => {}
                Err(_) => return true,
            }
        }
        incoming.drain(..taken);
    }
}

/// The payload of a whole frame from a viewer, unmasked.
fn unmasked_payload(frame: &[u8]) -> Vec<u8> {
    let header = header_bytes(frame[1]);
    let key = &frame[header..header + 4];
    frame[header + 4..].iter().zip(key.iter().cycle()).map(|(byte, key)| byte ^ key).collect()
}

/// A frame header's bytes before the mask, by its second byte.
fn header_bytes(second: u8) -> usize {
    match second & 0x7f {
        126 => 4,
        127 => 10,
        _ => 2,
    }
}

/// What the door learns of a viewer's subscription to the robot description, whose message
/// it never drops: the description is sent once, on subscribing, and a viewer that lost it
/// would draw no robot.
#[derive(Debug)]
struct DescriptionWatch {
    /// The description's channel, from the server's advertisements.
    channel: AtomicU64,
    /// The viewer's subscription to it, from its subscribe requests.
    subscription: AtomicU64,
}

/// Neither channel nor subscription known.
const UNKNOWN: u64 = u64::MAX;

impl Default for DescriptionWatch {
    fn default() -> Self {
        DescriptionWatch { channel: AtomicU64::new(UNKNOWN), subscription: AtomicU64::new(UNKNOWN) }
    }
}

impl DescriptionWatch {
    /// A text message from the server: an advertisement may name the description's channel.
    fn server_text(&self, payload: &[u8]) {
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(payload) else { return };
        if message["op"] != "advertise" {
            return;
        }
        for channel in message["channels"].as_array().into_iter().flatten() {
            if channel["topic"] == ROBOT_DESCRIPTION {
                self.channel.store(channel["id"].as_u64().unwrap_or(UNKNOWN), Ordering::Relaxed);
            }
        }
    }

    /// A text message from the viewer: a subscription to the description's channel, or its end.
    fn viewer_text(&self, payload: &[u8]) {
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(payload) else { return };
        let channel = self.channel.load(Ordering::Relaxed);
        if message["op"] == "subscribe" {
            for subscription in message["subscriptions"].as_array().into_iter().flatten() {
                if channel != UNKNOWN && subscription["channelId"].as_u64() == Some(channel) {
                    let id = subscription["id"].as_u64().unwrap_or(UNKNOWN);
                    self.subscription.store(id, Ordering::Relaxed);
                }
            }
        }
        if message["op"] == "unsubscribe" {
            let ended = message["subscriptionIds"].as_array().into_iter().flatten();
            if ended
                .filter_map(serde_json::Value::as_u64)
                .any(|id| id == self.subscription.load(Ordering::Relaxed))
            {
                self.subscription.store(UNKNOWN, Ordering::Relaxed);
            }
        }
    }

    fn subscription(&self) -> Option<u32> {
        u32::try_from(self.subscription.load(Ordering::Relaxed)).ok()
    }
}

/// Why a viewer's frame cut it off.
#[derive(Debug, PartialEq, Eq)]
enum ViewerFault {
    /// A handshake longer than [`MAX_HANDSHAKE_BYTES`].
    HandshakeTooLong,
    /// Reserved bits set (no extension is negotiated).
    Reserved,
    /// A frame without a mask: a client masks every frame (RFC 6455 5.1).
    Unmasked,
    /// An opcode RFC 6455 does not define.
    UnknownOpcode,
    /// A control frame fragmented or beyond 125 bytes.
    BadControl,
    /// A continuation with no message begun, or a message begun inside another.
    BadFragment,
    /// A frame or a fragmented message beyond [`MAX_VIEWER_MESSAGE_BYTES`].
    TooLarge,
}

/// What the door knows of a viewer's stream towards the server: whether the handshake has
/// passed, and how much of a fragmented message has.
#[derive(Debug, Default)]
struct ViewerFrames {
    shaken: bool,
    message_bytes: Option<usize>,
    /// The payloads, unmasked, of the whole text frames taken (the viewer's JSON requests).
    texts: Vec<Vec<u8>>,
}

impl ViewerFrames {
    /// How much of `bytes` (what has come from the viewer and not passed yet) may pass now:
    /// the handshake, then whole frames, each checked once its header is there (so a frame
    /// beyond the bound is refused before its payload is read).
    fn take(&mut self, bytes: &[u8]) -> Result<usize, ViewerFault> {
        let mut taken = 0;
        if !self.shaken {
            let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") else {
                return if bytes.len() > MAX_HANDSHAKE_BYTES {
                    Err(ViewerFault::HandshakeTooLong)
                } else {
                    Ok(0)
                };
            };
            taken = end + 4;
            self.shaken = true;
        }
        while let Some((length, message_bytes)) = self.check(&bytes[taken..])? {
            if bytes.len() - taken < length {
                break;
            }
            if bytes[taken] == TEXT_FINAL && self.message_bytes.is_none() {
                self.texts.push(unmasked_payload(&bytes[taken..taken + length]));
            }
            taken += length;
            self.message_bytes = message_bytes;
        }
        Ok(taken)
    }

    /// The frame starting `bytes`, once its header is there: its length (header included)
    /// and the fragmented message under way after it.
    fn check(&self, bytes: &[u8]) -> Result<Option<(usize, Option<usize>)>, ViewerFault> {
        let (Some(&first), Some(&second)) = (bytes.first(), bytes.get(1)) else { return Ok(None) };
        if first & 0x70 != 0 {
            return Err(ViewerFault::Reserved);
        }
        if second & 0x80 == 0 {
            return Err(ViewerFault::Unmasked);
        }
        let Some(length) = frame_length(bytes) else { return Ok(None) };
        let header = match second & 0x7f {
            126 => 8,
            127 => 14,
            _ => 6,
        };
        let payload = length - header;
        if payload > MAX_VIEWER_MESSAGE_BYTES {
            return Err(ViewerFault::TooLarge);
        }
        let last = first & 0x80 != 0;
        let under_way = match (first & 0x0f, self.message_bytes) {
            // Text or binary: a message begins.
            (0x1 | 0x2, None) => Some(payload),
            (0x0, Some(so_far)) => Some(so_far + payload),
            (0x0..=0x2, _) => return Err(ViewerFault::BadFragment),
            // Close, ping, pong: whole, short, and allowed between a message's fragments.
            (0x8..=0xa, so_far) => {
                if !last || payload > 125 {
                    return Err(ViewerFault::BadControl);
                }
                return Ok(Some((length, so_far)));
            }
            _ => return Err(ViewerFault::UnknownOpcode),
        };
        if under_way.is_some_and(|bytes| bytes > MAX_VIEWER_MESSAGE_BYTES) {
            return Err(ViewerFault::TooLarge);
        }
        Ok(Some((length, if last { None } else { under_way })))
    }
}

/// The server's answer to the handshake, then its frames, to the viewer through its queue:
/// the server's side is read as it comes, the viewer's written as it takes. False when the
/// viewer was cut off (among others, when its socket took no byte for `bounds.patience`
/// while its queue held some).
async fn forward(
    from: OwnedReadHalf,
    to: OwnedWriteHalf,
    counters: &ViewerCounters,
    bounds: ViewerBounds,
    watch: &DescriptionWatch,
) -> bool {
    let mut incoming: Vec<u8> = Vec::with_capacity(CHUNK_BYTES);
    let mut chunk = vec![0; CHUNK_BYTES];
    let mut outbox = Outbox::new(bounds.queue_messages, VIEWER_QUEUE_BYTES);
    let mut upgraded = false;
    let mut refused = false;
    // A connection that never completes the handshake gives its place up.
    let handshake = tokio::time::sleep(HANDSHAKE_PATIENCE);
    tokio::pin!(handshake);
    // Armed while the queue holds something, reset whenever the viewer's socket takes a byte.
    let stalled = tokio::time::sleep(bounds.patience);
    tokio::pin!(stalled);
    let mut server_closed = false;
    let farewell = tokio::time::sleep(FAREWELL_PATIENCE);
    tokio::pin!(farewell);
    loop {
        let was_empty = outbox.is_empty();
        tokio::select! {
            () = &mut handshake, if !upgraded => return false,
            () = &mut stalled, if !outbox.is_empty() => return false,
            // The server closed: what it sent before (its close frame, a status saying why)
            // goes to the viewer within the farewell's patience, then the door closes.
            () = &mut farewell, if server_closed => return true,
            ready = from.readable(), if !server_closed => {
                let read = match ready.and_then(|()| from.try_read(&mut chunk)) {
                    Ok(0) => None,
                    Ok(read) => Some(read),
                    Err(error) if error.kind() == ErrorKind::WouldBlock => continue,
                    Err(_) => None,
                };
                let Some(read) = read else {
                    if outbox.is_empty() {
                        return true;
                    }
                    server_closed = true;
                    farewell.as_mut().reset(Instant::now() + FAREWELL_PATIENCE);
                    continue;
                };
                incoming.extend_from_slice(&chunk[..read]);
                if refused {
                    // After a refusal, no frames: what the server sends passes as it is.
                    if !outbox.push(std::mem::take(&mut incoming), &counters.dropped) {
                        return false;
                    }
                    continue;
                }
                let mut taken = 0;
                if !upgraded {
                    // The server's HTTP answer to the handshake comes before any frame.
                    let Some(end) = incoming.windows(4).position(|window| window == b"\r\n\r\n") else {
                        if incoming.len() > MAX_HANDSHAKE_BYTES {
                            return false;
                        }
                        continue;
                    };
                    upgraded = true;
                    if !incoming.starts_with(SWITCHING_PROTOCOLS) {
                        // Refused (an error status and its body): passed through, never parsed
                        // as frames, until the server closes.
                        refused = true;
                        outbox.push(std::mem::take(&mut incoming), &counters.dropped);
                        continue;
                    }
                    taken = end + 4;
                    outbox.push(incoming[..taken].to_vec(), &counters.dropped);
                }
                while let Some(length) = frame_length(&incoming[taken..]) {
                    if length > MAX_FRAME_BYTES {
                        return false;
                    }
                    if incoming.len() - taken < length {
                        break;
                    }
                    let frame = incoming[taken..taken + length].to_vec();
                    taken += length;
                    if frame[0] == TEXT_FINAL {
                        watch.server_text(&frame[header_bytes(frame[1])..]);
                    }
                    outbox.kept_subscription = watch.subscription();
                    if !outbox.push(frame, &counters.dropped) {
                        return false;
                    }
                }
                incoming.drain(..taken);
                if was_empty && !outbox.is_empty() {
                    stalled.as_mut().reset(Instant::now() + bounds.patience);
                }
            }
            ready = to.writable(), if !outbox.is_empty() => {
                if ready.is_err() {
                    return true;
                }
                match outbox.write_to(&to, &counters.sent) {
                    Ok(()) if server_closed && outbox.is_empty() => return true,
                    Ok(()) => stalled.as_mut().reset(Instant::now() + bounds.patience),
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => return true,
                }
            }
        }
    }
}

/// The length of the WebSocket frame that starts `bytes` (header included), once its header
/// is all there.
fn frame_length(bytes: &[u8]) -> Option<usize> {
    let second = *bytes.get(1)?;
    let (header, payload) = match second & 0x7f {
        126 => (4, u64::from(u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?))),
        127 => (10, u64::from_be_bytes(bytes.get(2..10)?.try_into().ok()?)),
        short => (2, u64::from(short)),
    };
    let mask = if second & 0x80 != 0 { 4 } else { 0 };
    Some(usize::try_from(payload).unwrap_or(usize::MAX).saturating_add(header + mask))
}

/// Whether a whole frame is a message data frame: a message on a channel, which a slow viewer
/// may lose (everything else is the protocol's own: advertisements, server info, status).
fn is_message_data(frame: &[u8]) -> bool {
    let Some(&second) = frame.get(1) else { return false };
    let header = header_bytes(second);
    frame[0] == BINARY_FINAL && second & 0x80 == 0 && frame.get(header) == Some(&MESSAGE_DATA)
}

/// The subscription a message data frame is for.
fn subscription_of(frame: &[u8]) -> Option<u32> {
    let header = header_bytes(*frame.get(1)?);
    Some(u32::from_le_bytes(frame.get(header + 1..header + 5)?.try_into().ok()?))
}

/// A viewer's queue: at most `max_messages` message data frames, and `max_bytes` in all (a lone
/// frame always fits); when full, the oldest message data frame goes, counted. The protocol's
/// own frames (the handshake's answer, server info, advertisements, status) are bounded by
/// the bytes only: they come several at once, and must not cut off a viewer of a short queue.
struct Outbox {
    frames: VecDeque<(Vec<u8>, bool)>,
    /// Message data frames queued.
    messages: usize,
    /// The viewer's subscription to the robot description: its messages are never dropped.
    kept_subscription: Option<u32>,
    bytes: usize,
    /// How much of the front frame is written.
    written: usize,
    max_messages: usize,
    max_bytes: usize,
}

impl Outbox {
    fn new(max_messages: usize, max_bytes: usize) -> Outbox {
        Outbox {
            frames: VecDeque::new(),
            messages: 0,
            kept_subscription: None,
            bytes: 0,
            written: 0,
            max_messages,
            max_bytes,
        }
    }

    fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Queue a frame, dropping the oldest message data frames (never the one being written)
    /// to make room; false when the protocol's own frames alone fill the queue.
    fn push(&mut self, frame: Vec<u8>, dropped: &AtomicU64) -> bool {
        let droppable = is_message_data(&frame) && subscription_of(&frame) != self.kept_subscription;
        while !self.frames.is_empty()
            && ((droppable && self.messages >= self.max_messages)
                || self.bytes + frame.len() > self.max_bytes)
        {
            let writing = usize::from(self.written > 0);
            let oldest = self.frames.iter().skip(writing).position(|(_, droppable)| *droppable);
            match oldest {
                Some(index) => {
                    let (old, _) = self.frames.remove(writing + index).expect("a frame found there");
                    self.bytes -= old.len();
                    self.messages -= 1;
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                None if droppable => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                None => return false,
            }
        }
        self.bytes += frame.len();
        self.messages += usize::from(droppable);
        self.frames.push_back((frame, droppable));
        true
    }

    /// Write what the viewer's socket takes of the front frame.
    fn write_to(&mut self, to: &OwnedWriteHalf, sent: &AtomicU64) -> std::io::Result<()> {
        let Some((frame, droppable)) = self.frames.front() else { return Ok(()) };
        self.written += to.try_write(&frame[self.written..])?;
        if self.written == frame.len() {
            if is_message_data(frame) {
                sent.fetch_add(1, Ordering::Relaxed);
            }
            self.messages -= usize::from(*droppable);
            self.bytes -= frame.len();
            self.written = 0;
            self.frames.pop_front();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// An unmasked frame as a server sends it.
    fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut frame = vec![first];
        match payload.len() {
            short @ 0..=125 => frame.push(short as u8),
            medium @ 126..=0xffff => {
                frame.push(126);
                frame.extend_from_slice(&(medium as u16).to_be_bytes());
            }
            long => {
                frame.push(127);
                frame.extend_from_slice(&(long as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(payload);
        frame
    }

    fn data(size: usize) -> Vec<u8> {
        let mut payload = vec![7; size];
        payload[0] = MESSAGE_DATA;
        frame(BINARY_FINAL, &payload)
    }

    /// A frame as a viewer sends it: masked (with a zero mask, which changes nothing).
    fn masked(first: u8, payload_bytes: usize) -> Vec<u8> {
        let mut bytes = frame(first, &vec![b' '; payload_bytes]);
        bytes[1] |= 0x80;
        let header = match payload_bytes {
            0..=125 => 2,
            126..=0xffff => 4,
            _ => 10,
        };
        bytes.splice(header..header, [0; 4]);
        bytes
    }

    #[test]
    fn a_viewers_frames_pass_whole_once_checked_and_beyond_the_bound_cut_it_off() {
        let handshake = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        let text = masked(0x81, 100);
        let mut frames = ViewerFrames::default();
        let both = [handshake.clone(), text.clone()].concat();
        assert_eq!(frames.take(&both[..both.len() - 1]), Ok(handshake.len()), "a frame cut short waits");
        assert_eq!(frames.take(&text), Ok(text.len()));
        // A fragmented message within the bound passes, pings allowed between its fragments.
        let fragments = [masked(0x01, 30_000), masked(0x89, 4), masked(0x80, 30_000)].concat();
        assert_eq!(frames.take(&fragments), Ok(fragments.len()));
        let shaken = || ViewerFrames { shaken: true, ..ViewerFrames::default() };
        // Refused as soon as the header is there, before the payload is read.
        let large = masked(0x82, MAX_VIEWER_MESSAGE_BYTES + 1);
        assert_eq!(shaken().take(&large[..14]), Err(ViewerFault::TooLarge));
        assert_eq!(shaken().take(&masked(0x82, MAX_VIEWER_MESSAGE_BYTES)).map(|_| ()), Ok(()));
        let too_long = [masked(0x02, 40_000), masked(0x80, 40_000)].concat();
        assert_eq!(shaken().take(&too_long), Err(ViewerFault::TooLarge), "a message's fragments in all");
        assert_eq!(shaken().take(&frame(0x81, b"{}")), Err(ViewerFault::Unmasked));
        assert_eq!(shaken().take(&masked(0xc1, 2)), Err(ViewerFault::Reserved));
        assert_eq!(shaken().take(&masked(0x83, 2)), Err(ViewerFault::UnknownOpcode));
        assert_eq!(shaken().take(&masked(0x80, 2)), Err(ViewerFault::BadFragment));
        assert_eq!(shaken().take(&masked(0x09, 2)), Err(ViewerFault::BadControl));
        assert_eq!(shaken().take(&masked(0x89, 126)), Err(ViewerFault::BadControl));
        let endless = vec![b'x'; MAX_HANDSHAKE_BYTES + 1];
        assert_eq!(ViewerFrames::default().take(&endless), Err(ViewerFault::HandshakeTooLong));
    }

    /// A viewer's bounds, as configured by default.
    const BOUNDS: ViewerBounds =
        ViewerBounds { max_viewers: 8, queue_messages: 1024, patience: Duration::from_secs(10) };
    /// The server's answer to a handshake it accepts.
    const SWITCHING: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\n\r\n";
    /// Socket buffers small enough that a viewer not reading stops taking bytes at once.
    const SMALL_BUFFER: u32 = 16 << 10;

    /// A connected pair of sockets: (the connecting end, the accepted end); with a buffer size,
    /// the connecting end receives and the accepted end sends through small buffers.
    async fn pair(small: bool) -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        if small {
            socket.set_recv_buffer_size(SMALL_BUFFER).unwrap();
        }
        let (connected, accepted) =
            tokio::join!(socket.connect(listener.local_addr().unwrap()), listener.accept());
        let accepted = accepted.unwrap().0;
        if small {
            socket2::SockRef::from(&accepted).set_send_buffer_size(SMALL_BUFFER as usize).unwrap();
        }
        (connected.unwrap(), accepted)
    }

    /// The door relaying `sent` from a server that then closes to a viewer (its socket's
    /// buffers small with `small_viewer`) that starts reading after `wait`: whether the viewer
    /// was kept, and all it read.
    async fn relay_until_closed(sent: &[u8], small_viewer: bool, wait: Duration) -> (bool, Vec<u8>) {
        let (mut server, from_server) = pair(false).await;
        let (mut viewer, to_viewer) = pair(small_viewer).await;
        let counters = counters();
        let watch = DescriptionWatch::default();
        let closing = async {
            server.write_all(sent).await.unwrap();
            drop(server);
        };
        let reading = async {
            tokio::time::sleep(wait).await;
            let mut received = Vec::new();
            viewer.read_to_end(&mut received).await.unwrap();
            received
        };
        let relaying =
            forward(from_server.into_split().0, to_viewer.into_split().1, &counters, BOUNDS, &watch);
        let ((), kept, received) = tokio::join!(closing, relaying, reading);
        (kept, received)
    }

    fn counters() -> ViewerCounters {
        ViewerCounters {
            address: "127.0.0.1:1".parse().unwrap(),
            sent: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_viewer_whose_socket_takes_nothing_is_cut_off() {
        let (mut server, from_server) = pair(false).await;
        let (_viewer, to_viewer) = pair(true).await;
        let counters = counters();
        let watch = DescriptionWatch::default();
        let feeding = async {
            server.write_all(SWITCHING).await.unwrap();
            for _ in 0..200 {
                server.write_all(&data(10_000)).await.unwrap();
            }
            // The server stays: only the viewer is at fault.
            std::future::pending::<()>().await;
        };
        let relaying =
            forward(from_server.into_split().0, to_viewer.into_split().1, &counters, BOUNDS, &watch);
        let kept = tokio::select! {
            () = feeding => unreachable!("the server feeds, then waits"),
            kept = tokio::time::timeout(3 * BOUNDS.patience, relaying) => kept,
        };
        assert_eq!(kept, Ok(false), "cut off after its patience");
    }

    #[tokio::test(start_paused = true)]
    async fn what_the_server_sent_before_closing_reaches_the_viewer() {
        let mut sent = SWITCHING.to_vec();
        for _ in 0..200 {
            sent.extend(data(10_000));
        }
        // A status, then the close frame: what the SDK sends a client it disconnects.
        sent.extend(frame(0x81, br#"{"op":"status","level":2,"message":"backlog full"}"#));
        sent.extend(frame(0x88, &1000u16.to_be_bytes()));
        // The viewer reads once everything else waits: the server has closed and the door has
        // seen it, with most of what it sent still queued.
        let (kept, received) = relay_until_closed(&sent, true, Duration::from_millis(100)).await;
        assert!(kept);
        assert_eq!(received.len(), sent.len());
        assert!(received == sent, "everything the server sent, in order");
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_handshake_passes_through_unparsed() {
        // A body that, parsed as frames, would be a frame cut short: lost at the close.
        let body = "Not a WebSocket request: missing sec-websocket-key";
        let sent = format!("HTTP/1.1 400 Bad Request\r\ncontent-length: {}\r\n\r\n{body}", body.len());
        let (kept, received) = relay_until_closed(sent.as_bytes(), false, Duration::ZERO).await;
        assert!(kept);
        assert_eq!(String::from_utf8(received).unwrap(), sent);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_frame_beyond_the_bound_cuts_the_viewer_off_before_its_payload() {
        let (mut server, from_server) = pair(false).await;
        let (_viewer, to_viewer) = pair(false).await;
        let counters = counters();
        let watch = DescriptionWatch::default();
        let header = [&[BINARY_FINAL, 127][..], &(MAX_FRAME_BYTES as u64 + 1).to_be_bytes()].concat();
        server.write_all(&[SWITCHING, &header].concat()).await.unwrap();
        let relaying =
            forward(from_server.into_split().0, to_viewer.into_split().1, &counters, BOUNDS, &watch);
        let kept = tokio::time::timeout(Duration::from_secs(60), relaying).await;
        assert_eq!(kept, Ok(false), "cut off on the header, not waiting for 16 MiB");
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_are_bounded_at_once_and_in_time() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let door_address = listener.local_addr().unwrap();
        let door = Arc::new(Door::default());
        // No viewer let in: every connection is refused (the server is never reached).
        let bounds = ViewerBounds { max_viewers: 0, ..BOUNDS };
        tokio::spawn(admit(listener, "127.0.0.1:9".parse().unwrap(), bounds, Arc::clone(&door)));
        let started = Instant::now();
        let mut refused = Vec::new();
        for _ in 0..=REFUSING_AT_ONCE {
            refused.push(TcpStream::connect(door_address).await.unwrap());
        }
        // None sends a handshake or reads. The one beyond the refusals under way is closed
        // at once; the others once their patience is over.
        let ended = |mut socket: TcpStream| async move {
            let read = tokio::time::timeout(10 * REFUSAL_PATIENCE, socket.read_to_end(&mut Vec::new())).await;
            assert!(read.is_ok(), "a refused connection ends");
            started.elapsed()
        };
        let beyond = ended(refused.pop().unwrap()).await;
        assert!(beyond < REFUSAL_PATIENCE, "closed at once, not after {beyond:?}");
        for socket in refused {
            let after = ended(socket).await;
            assert!((REFUSAL_PATIENCE..2 * REFUSAL_PATIENCE).contains(&after), "{after:?}");
        }
        assert_eq!(door.refused.load(Ordering::Relaxed), REFUSING_AT_ONCE as u64 + 1);
    }

    #[test]
    fn the_robot_descriptions_message_is_never_dropped() {
        let watch = DescriptionWatch::default();
        let advertise = json!({"op": "advertise", "channels": [
            {"id": 4, "topic": "/tf"}, {"id": 7, "topic": ROBOT_DESCRIPTION}]});
        watch.server_text(advertise.to_string().as_bytes());
        // The viewer's subscribe request, masked, as the door reads it.
        let subscribe = json!({"op": "subscribe", "subscriptions": [
            {"id": 1, "channelId": 4}, {"id": 2, "channelId": 7}]})
        .to_string();
        let mut request = frame(TEXT_FINAL, subscribe.as_bytes());
        request[1] |= 0x80;
        let key = [1, 2, 3, 4];
        let header = header_bytes(request[1]);
        request.splice(header..header, key);
        for (index, byte) in request[header + 4..].iter_mut().enumerate() {
            *byte ^= key[index % 4];
        }
        let mut frames = ViewerFrames { shaken: true, ..ViewerFrames::default() };
        assert_eq!(frames.take(&request), Ok(request.len()));
        for text in frames.texts.drain(..) {
            watch.viewer_text(&text);
        }
        assert_eq!(watch.subscription(), Some(2));
        // A queue of one message: the description stays while the others come and go.
        let on = |subscription: u32| {
            let mut payload = vec![MESSAGE_DATA];
            payload.extend(subscription.to_le_bytes());
            payload.extend([0; 300]);
            frame(BINARY_FINAL, &payload)
        };
        let dropped = AtomicU64::new(0);
        let mut outbox = Outbox::new(1, usize::MAX);
        outbox.kept_subscription = watch.subscription();
        assert!(outbox.push(on(2), &dropped));
        for _ in 0..5 {
            assert!(outbox.push(on(1), &dropped));
        }
        assert_eq!(outbox.frames.front().map(|(frame, _)| subscription_of(frame)), Some(Some(2)));
        assert_eq!(dropped.load(Ordering::Relaxed), 4);
        let unsubscribe = json!({"op": "unsubscribe", "subscriptionIds": [2]}).to_string();
        watch.viewer_text(unsubscribe.as_bytes());
        assert_eq!(watch.subscription(), None);
    }

    #[test]
    fn frames_are_measured_whatever_their_length_field() {
        for size in [0, 125, 126, 0xffff, 0x10000] {
            let bytes = frame(BINARY_FINAL, &vec![1; size]);
            assert_eq!(frame_length(&bytes), Some(bytes.len()));
            assert_eq!(frame_length(&bytes[..1]), None);
        }
        assert_eq!(frame_length(&[0x82, 127, 0, 0]), None, "a header cut short");
    }

    #[test]
    fn only_message_data_is_droppable() {
        assert!(is_message_data(&data(300)));
        assert!(!is_message_data(&frame(0x81, br#"{"op":"advertise"}"#)), "text: the protocol's own");
        assert!(!is_message_data(&frame(BINARY_FINAL, &[0x02, 0, 0])), "binary time, not message data");
    }

    #[test]
    fn a_full_queue_drops_its_oldest_messages_and_keeps_the_protocols_own() {
        let dropped = AtomicU64::new(0);
        let mut outbox = Outbox::new(3, usize::MAX);
        let advertise = frame(0x81, b"{}");
        assert!(outbox.push(advertise.clone(), &dropped));
        for size in [10, 11, 12, 13] {
            assert!(outbox.push(data(size), &dropped));
        }
        assert_eq!(dropped.load(Ordering::Relaxed), 1);
        let kept: Vec<usize> = outbox.frames.iter().map(|(frame, _)| frame.len()).collect();
        assert_eq!(kept, [advertise.len(), 13, 14, 15]);
    }

    #[test]
    fn the_protocols_own_frames_never_count_against_a_short_queue() {
        // viewer_queue = 1: the handshake's answer, server info and advertisements come at
        // once, and the viewer stays; its messages are bounded to one.
        let dropped = AtomicU64::new(0);
        let mut short = Outbox::new(1, usize::MAX);
        for _ in 0..5 {
            assert!(short.push(frame(0x81, b"{}"), &dropped));
        }
        assert!(short.push(data(10), &dropped));
        assert!(short.push(data(11), &dropped));
        assert_eq!((short.frames.len(), short.messages, dropped.load(Ordering::Relaxed)), (6, 1, 1));
        // The protocol's own frames are bounded by the bytes: beyond, the viewer is cut off.
        let mut control = Outbox::new(1, 10);
        assert!(control.push(frame(0x81, b"{}"), &dropped));
        assert!(control.push(frame(0x81, b"{}"), &dropped));
        assert!(!control.push(frame(0x81, b"{}"), &dropped));
    }

    #[test]
    fn the_queue_is_bounded_in_bytes_too() {
        let dropped = AtomicU64::new(0);
        let mut outbox = Outbox::new(100, 1000);
        for _ in 0..10 {
            assert!(outbox.push(data(300), &dropped));
        }
        assert!(outbox.bytes <= 1000, "{}", outbox.bytes);
        assert_eq!(dropped.load(Ordering::Relaxed), 7);
        let mut lone = Outbox::new(100, 1000);
        assert!(lone.push(data(5000), &dropped), "a lone frame beyond the bytes always fits");
    }
}
