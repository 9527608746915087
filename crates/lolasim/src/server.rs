//! The socket side: listening where LoLA listens, taking one client at a time (a second is
//! closed at once), and reading its actuator maps from the stream.

use std::io::Read;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use naobroker_lola::{decode_actuator_map, DecodeError, MAX_MESSAGE_BYTES};

use crate::cycle::ask_priority;
use crate::error::SimError;
use crate::state::{Connection, Shared};

/// How often a listener with no client waiting looks again (and sees a restart or a stop).
const ACCEPT_POLL: Duration = Duration::from_millis(2);

/// Listen on `path`: a stale socket file is replaced, one another server answers on is not.
pub(crate) fn bind(path: &Path) -> Result<UnixListener, SimError> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(SimError::AlreadyServed(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(|source| SimError::Listen { path: path.to_owned(), source })?;
    }
    let listener =
        UnixListener::bind(path).map_err(|source| SimError::Listen { path: path.to_owned(), source })?;
    listener.set_nonblocking(true).map_err(|source| SimError::Listen { path: path.to_owned(), source })?;
    Ok(listener)
}

/// Take clients on `listener` until a restart raises the generation or the simulator stops.
pub(crate) fn spawn_acceptor(
    shared: Arc<Shared>,
    listener: UnixListener,
    generation: u64,
) -> Result<JoinHandle<()>, SimError> {
    std::thread::Builder::new()
        .name("lolasim-accept".into())
        .spawn(move || accept_clients(&shared, &listener, generation))
        .map_err(SimError::Thread)
}

fn accept_clients(shared: &Arc<Shared>, listener: &UnixListener, generation: u64) {
    // It locks the state as the other two do: a lower priority holding the lock would stall them.
    ask_priority(shared, "lolasim-accept", "lolasim acceptor");
    loop {
        let accepted = listener.accept();
        let state = shared.lock();
        if state.stopping || state.generation != generation {
            return;
        }
        match accepted {
            Ok((stream, _)) => {
                drop(state);
                take_client(shared, stream);
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                drop(
                    shared.wait_for(state, ACCEPT_POLL, |state| {
                        state.stopping || state.generation != generation
                    }),
                );
            }
            Err(error) => {
                tracing::warn!(%error, "lolasim: accepting a client failed");
                drop(shared.wait_for(state, ACCEPT_POLL, |state| state.stopping));
            }
        }
    }
}

/// The client, if none is connected: its reader starts. Otherwise it is closed at once.
fn take_client(shared: &Arc<Shared>, stream: UnixStream) {
    let mut state = shared.lock();
    if state.connection.is_some() {
        state.stats.refused += 1;
        tracing::warn!("lolasim: a second client was closed: LoLA serves one client at a time");
        return;
    }
    let prepared = stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_write_timeout(Some(shared.options.write_timeout)))
        .and_then(|()| stream.try_clone());
    let writer = match prepared {
        Ok(writer) => writer,
        Err(error) => {
            tracing::warn!(%error, "lolasim: cannot set up the client's connection");
            return;
        }
    };
    let id = state.stats.connections + 1;
    let reader_shared = Arc::clone(shared);
    let reader = std::thread::Builder::new()
        .name("lolasim-read".into())
        .spawn(move || read_answers(&reader_shared, stream, id));
    if let Err(error) = reader {
        tracing::warn!(%error, "lolasim: cannot start the client's reader");
        return;
    }
    state.connection = Some(Connection { id, stream: Arc::new(writer) });
    state.latest = None;
    state.stats.connections = id;
    state.stats.connected = true;
    tracing::info!(connection = id, "lolasim: client connected");
    shared.changed.notify_all();
}

/// Decode the client's actuator maps until its connection ends, then forget it.
fn read_answers(shared: &Shared, mut stream: UnixStream, id: u64) {
    ask_priority(shared, "lolasim-read", "lolasim reader");
    let mut buffer = vec![0u8; 2 * MAX_MESSAGE_BYTES];
    let mut filled = 0;
    loop {
        match stream.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        let received_at = Instant::now();
        let mut state = shared.lock();
        if state.connection.as_ref().map(|connection| connection.id) != Some(id) {
            return;
        }
        loop {
            let mut map = state.kept;
            match decode_actuator_map(&buffer[..filled], &mut map) {
                Ok(decoded) => {
                    state.record_answer(map, decoded, received_at, &shared.options);
                    buffer.copy_within(decoded.consumed..filled, 0);
                    filled -= decoded.consumed;
                }
                Err(DecodeError::Incomplete) => break,
                Err(error) => {
                    state.stats.malformed += 1;
                    tracing::warn!(%error, dropped = filled, "lolasim: the client sent no actuator map");
                    filled = 0;
                    break;
                }
            }
        }
        shared.changed.notify_all();
    }
    let mut state = shared.lock();
    if state.connection.as_ref().is_some_and(|connection| connection.id == id) {
        tracing::info!(connection = id, "lolasim: client disconnected");
    }
    state.drop_connection(id);
    shared.changed.notify_all();
}
