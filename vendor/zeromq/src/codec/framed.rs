use crate::codec::ZmqCodec;
use crate::curve::CurveMessageCipher;
use crate::{SocketOptions, UnfinishedShare, STALL_MAX_PERIODS, STALL_MIN_PROGRESS};

use super::error::{CodecError, CodecResult};
use super::Message;

use asynchronous_codec::{Decoder, FramedWrite};
use bytes::BytesMut;
use futures::{ready, AsyncRead, AsyncWrite, Stream};

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

// Enables us to have multiple bounds on the dyn trait in `InnerFramed`
pub trait FrameableRead: AsyncRead + Unpin + Send + Sync {}
impl<T> FrameableRead for T where T: AsyncRead + Unpin + Send + Sync {}
pub trait FrameableWrite: AsyncWrite + Unpin + Send + Sync {}
impl<T> FrameableWrite for T where T: AsyncWrite + Unpin + Send + Sync {}

pub(crate) type ZmqFramedWrite = asynchronous_codec::FramedWrite<Box<dyn FrameableWrite>, ZmqCodec>;

/// ZMTP framed reader with an adaptive read chunk.
///
/// Starts with a small read chunk and grows only when the transport keeps
/// filling the requested space. This avoids a large default allocation while
/// still reducing read/poll loops for large receive bursts. Short-read
/// recovery reduces initialization and allocation traffic after a burst ends.
pub struct ZmqFramedRead {
    inner: Box<dyn FrameableRead>,
    codec: ZmqCodec,
    buffer: BytesMut,
    read_chunk_size: usize,
    // Configuration is shared; adaptation state belongs to this connection.
    options: Arc<SocketOptions>,
    short_reads: usize,
    // After an error the decoder state is meaningless: the stream ends instead of
    // decoding on, so every socket type lets go of the connection.
    failed: bool,
    // What this connection holds of `SocketOptions::unfinished_budget`.
    unfinished: Option<UnfinishedShare>,
    // Set while the connection waits in the middle of a message (`stall_timeout`).
    stall: Option<Stall>,
}

/// One period of `SocketOptions::stall_timeout`, and what arrived in it.
struct Stall {
    ends: Pin<Box<dyn Future<Output = ()> + Send + Sync>>,
    received: usize,
    finished_a_message: bool,
    /// Periods before this one spent in the middle of the same message.
    unfinished_periods: u32,
}

impl Stall {
    fn new(timeout: Duration, unfinished_periods: u32) -> Stall {
        Stall {
            ends: Box::pin(crate::async_rt::task::sleep(timeout)),
            received: 0,
            finished_a_message: false,
            unfinished_periods,
        }
    }
}

impl ZmqFramedRead {
    pub(crate) fn new(inner: Box<dyn FrameableRead>, options: Arc<SocketOptions>) -> Self {
        Self {
            unfinished: options
                .unfinished_budget
                .as_ref()
                .map(|budget| budget.share()),
            inner,
            codec: ZmqCodec::with_options(&options),
            buffer: BytesMut::with_capacity(options.read_buffer_initial_size),
            read_chunk_size: options.read_buffer_initial_size,
            options,
            short_reads: 0,
            failed: false,
            stall: None,
        }
    }

    fn poll_read_into_buffer(
        &mut self,
        cx: &mut Context<'_>,
        min_read_size: usize,
    ) -> Poll<io::Result<usize>> {
        let start = self.buffer.len();
        let read_size = self
            .read_chunk_size
            .max(min_read_size)
            .min(self.options.read_buffer_max_size);

        // futures::AsyncRead requires an initialized &mut [u8]. Grow BytesMut
        // first, then trim back to the actual read length so the read path does
        // not need a scratch buffer and a second data copy.
        // The decoder checks frame length + maximum chunk size at the wire
        // boundary, so preparing this slice cannot overflow its length.
        self.buffer.resize(start + read_size, 0);

        match Pin::new(&mut self.inner).poll_read(cx, &mut self.buffer[start..]) {
            Poll::Ready(Ok(bytes_read)) => {
                self.buffer.truncate(start + bytes_read);
                if bytes_read >= read_size
                    && self.read_chunk_size < self.options.read_buffer_max_size
                {
                    self.read_chunk_size =
                        (self.read_chunk_size * 2).min(self.options.read_buffer_max_size);
                }
                if bytes_read > 0 && bytes_read < self.read_chunk_size / 2 {
                    self.short_reads += 1;
                    if self.short_reads == self.options.read_buffer_short_reads {
                        // Confirm short reads before shrinking: an isolated burst tail
                        // otherwise makes the next batch repeatedly grow and shrink.
                        // Leave room above the observation without increasing the chunk.
                        self.read_chunk_size = (bytes_read.next_power_of_two() * 2)
                            .max(self.options.read_buffer_initial_size * 2)
                            .min(self.read_chunk_size);
                        self.short_reads = 0;
                    }
                } else if bytes_read > 0 {
                    self.short_reads = 0;
                }
                Poll::Ready(Ok(bytes_read))
            }
            Poll::Ready(Err(error)) => {
                self.buffer.truncate(start);
                Poll::Ready(Err(error))
            }
            Poll::Pending => {
                self.buffer.truncate(start);
                Poll::Pending
            }
        }
    }
}

impl Stream for ZmqFramedRead {
    type Item = CodecResult<Message>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        let item = ready!(this.poll_decode(cx));
        if let Some(Err(error)) = &item {
            this.failed = true;
            match error {
                CodecError::MessageTooLarge { announced, limit } => {
                    log::warn!("closing a connection whose peer announced a {announced}-byte message (limit {limit})");
                    this.options
                        .oversized_message_drops
                        .fetch_add(1, Ordering::Relaxed);
                }
                CodecError::Stalled { .. } | CodecError::TooSlow { .. } => {
                    log::warn!("closing a connection: {error}");
                    this.options
                        .stalled_message_drops
                        .fetch_add(1, Ordering::Relaxed);
                }
                CodecError::UnfinishedOverBudget { .. } => {
                    log::warn!("closing a connection: {error}");
                }
                _ => {}
            }
        }
        Poll::Ready(item)
    }
}

impl ZmqFramedRead {
    fn poll_decode(&mut self, cx: &mut Context<'_>) -> Poll<Option<CodecResult<Message>>> {
        // Consume buffered data first; read from the socket only when the
        // current buffer cannot produce a full message.
        if let Some(item) = self.codec.decode(&mut self.buffer)? {
            return Poll::Ready(Some(self.decoded(item)));
        }

        loop {
            let min_read_size = self.codec.bytes_needed(self.buffer.len());
            let n = match self.poll_read_into_buffer(cx, min_read_size) {
                Poll::Ready(read) => read?,
                Poll::Pending => {
                    // Reading may have grown the buffer before it found nothing to read.
                    self.hold_unfinished()?;
                    self.poll_stall(cx)?;
                    return Poll::Pending;
                }
            };
            if let Some(stall) = &mut self.stall {
                stall.received = stall.received.saturating_add(n);
            }
            let ended = n == 0;
            match self.codec.decode(&mut self.buffer)? {
                Some(item) => return Poll::Ready(Some(self.decoded(item))),
                None if ended => {
                    // Give the decoder one final chance at EOF; leftover bytes
                    // mean the stream ended with a truncated frame.
                    if self.buffer.is_empty() {
                        return Poll::Ready(None);
                    }
                    match self.codec.decode_eof(&mut self.buffer)? {
                        Some(item) => return Poll::Ready(Some(Ok(item))),
                        None if self.buffer.is_empty() => return Poll::Ready(None),
                        None => {
                            return Poll::Ready(Some(Err(CodecError::Io(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "bytes remaining in stream",
                            )))));
                        }
                    }
                }
                None => self.hold_unfinished()?,
            }
        }
    }

    fn decoded(&mut self, item: Message) -> CodecResult<Message> {
        if let Some(stall) = &mut self.stall {
            stall.finished_a_message = true;
        }
        self.hold_unfinished()?;
        Ok(item)
    }

    /// Holds, in the unfinished budget, what the buffer and the frames of an unfinished
    /// multipart message take past one maximum read chunk (which every connection may hold).
    fn hold_unfinished(&mut self) -> CodecResult<()> {
        let Some(share) = &mut self.unfinished else {
            return Ok(());
        };
        let cost = usize::try_from(self.codec.buffered_message_cost()).unwrap_or(usize::MAX);
        let wanted = self
            .buffer
            .capacity()
            .saturating_add(cost)
            .saturating_sub(self.options.read_buffer_max_size);
        match share.hold(wanted) {
            true => Ok(()),
            false => Err(CodecError::UnfinishedOverBudget {
                wanted,
                limit: share.limit(),
            }),
        }
    }

    /// While the connection waits in the middle of a message, fails it at the end of a
    /// `stall_timeout` in which it neither finished a message nor received
    /// `STALL_MIN_PROGRESS` bytes.
    fn poll_stall(&mut self, cx: &mut Context<'_>) -> CodecResult<()> {
        let Some(timeout) = self.options.stall_timeout else {
            return Ok(());
        };
        if self.buffer.is_empty() && !self.codec.mid_message() {
            self.stall = None;
            return Ok(());
        }
        let stall = self.stall.get_or_insert_with(|| Stall::new(timeout, 0));
        while stall.ends.as_mut().poll(cx).is_ready() {
            if !stall.finished_a_message && stall.received < STALL_MIN_PROGRESS {
                return Err(CodecError::Stalled {
                    timeout,
                    received: stall.received,
                });
            }
            let periods = if stall.finished_a_message { 0 } else { stall.unfinished_periods + 1 };
            if periods >= STALL_MAX_PERIODS {
                return Err(CodecError::TooSlow { timeout, periods });
            }
            *stall = Stall::new(timeout, periods);
        }
        Ok(())
    }
}

/// Equivalent to [`asynchronous_codec::Framed<T, ZmqCodec>`]
pub struct FramedIo {
    pub read_half: ZmqFramedRead,
    pub write_half: ZmqFramedWrite,
}

impl FramedIo {
    pub fn new(
        read_half: Box<dyn FrameableRead>,
        write_half: Box<dyn FrameableWrite>,
        options: Arc<SocketOptions>,
    ) -> Self {
        let read_half = ZmqFramedRead::new(read_half, options);
        let write_half = FramedWrite::new(write_half, ZmqCodec::new());
        Self {
            read_half,
            write_half,
        }
    }

    pub fn into_parts(self) -> (ZmqFramedRead, ZmqFramedWrite) {
        (self.read_half, self.write_half)
    }

    /// After a CURVE handshake: from now on every frame is sealed into, and must arrive
    /// in, a MESSAGE box.
    pub(crate) fn start_curve_messages(
        &mut self,
        sealing: CurveMessageCipher,
        opening: CurveMessageCipher,
    ) {
        self.read_half.codec.start_curve(opening);
        self.write_half.encoder_mut().start_curve(sealing);
    }
}

#[cfg(test)]
mod tests {
    mod read_buffer;
    mod socket_options;

    use super::*;
    use crate::async_rt;
    use crate::codec::ZmqGreeting;

    use bytes::{Bytes, BytesMut};
    use futures::StreamExt;
    use futures::{io::Cursor, AsyncRead};
    use std::io::ErrorKind;
    use std::sync::{Arc, Mutex};

    const INITIAL_READ_CHUNK_SIZE: usize = 128;
    const MAX_READ_CHUNK_SIZE: usize = 64 * 1024;

    struct RecordingReader {
        input: Vec<u8>,
        position: usize,
        requested_sizes: Arc<Mutex<Vec<usize>>>,
    }

    impl RecordingReader {
        fn new(input: Vec<u8>, requested_sizes: Arc<Mutex<Vec<usize>>>) -> Self {
            Self {
                input,
                position: 0,
                requested_sizes,
            }
        }
    }

    impl AsyncRead for RecordingReader {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buffer: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            self.requested_sizes.lock().unwrap().push(buffer.len());

            let remaining = self.input.len() - self.position;
            if remaining == 0 {
                return Poll::Ready(Ok(0));
            }

            let bytes_read = remaining.min(buffer.len());
            let end = self.position + bytes_read;
            buffer[..bytes_read].copy_from_slice(&self.input[self.position..end]);
            self.position = end;

            Poll::Ready(Ok(bytes_read))
        }
    }

    fn encoded_stream(frames: &[&[u8]]) -> Vec<u8> {
        let mut bytes = BytesMut::from(ZmqGreeting::default());
        for frame in frames {
            if frame.len() > u8::MAX as usize {
                bytes.extend_from_slice(&[0b0000_0010]);
                bytes.extend_from_slice(&(frame.len() as u64).to_be_bytes());
            } else {
                bytes.extend_from_slice(&[0, frame.len() as u8]);
            }
            bytes.extend_from_slice(frame);
        }
        bytes.to_vec()
    }

    #[async_rt::test]
    async fn test_zmq_framed_read_yields_buffered_messages_before_reading_more() {
        let input = encoded_stream(&[b"first", b"second"]);
        let mut reader = ZmqFramedRead::new(
            Box::new(Cursor::new(input)),
            Arc::new(SocketOptions::default()),
        );

        assert!(matches!(
            reader.next().await,
            Some(Ok(Message::Greeting(_)))
        ));

        let first = reader
            .next()
            .await
            .expect("first message")
            .expect("decode first");
        let Message::Message(first) = first else {
            panic!("unexpected first frame type");
        };
        assert_eq!(first.get(0), Some(&Bytes::from_static(b"first")));

        let second = reader
            .next()
            .await
            .expect("second message")
            .expect("decode second");
        let Message::Message(second) = second else {
            panic!("unexpected second frame type");
        };
        assert_eq!(second.get(0), Some(&Bytes::from_static(b"second")));

        assert!(reader.next().await.is_none());
    }

    #[async_rt::test]
    async fn test_zmq_framed_read_reports_truncated_frame_at_eof() {
        let mut input = BytesMut::from(ZmqGreeting::default()).to_vec();
        input.extend_from_slice(&[0, 5, b'a']);
        let mut reader = ZmqFramedRead::new(
            Box::new(Cursor::new(input)),
            Arc::new(SocketOptions::default()),
        );

        assert!(matches!(
            reader.next().await,
            Some(Ok(Message::Greeting(_)))
        ));

        let error = reader
            .next()
            .await
            .expect("truncated frame should produce an item")
            .expect_err("truncated frame should fail");
        match error {
            CodecError::Io(error) => assert_eq!(error.kind(), ErrorKind::UnexpectedEof),
            other => panic!("unexpected error type: {other:?}"),
        }
    }

    #[async_rt::test]
    async fn test_zmq_framed_read_uses_decoder_demand_after_full_reads() {
        let frame = vec![b'a'; 600];
        let requested_sizes = Arc::new(Mutex::new(Vec::new()));
        let input = encoded_stream(&[&frame]);
        let input_len = input.len();
        let mut reader = ZmqFramedRead::new(
            Box::new(RecordingReader::new(input, Arc::clone(&requested_sizes))),
            Arc::new(SocketOptions::default()),
        );

        assert!(matches!(
            reader.next().await,
            Some(Ok(Message::Greeting(_)))
        ));

        let message = reader
            .next()
            .await
            .expect("message")
            .expect("decode message");
        let Message::Message(message) = message else {
            panic!("unexpected message type");
        };
        assert_eq!(message.get(0), Some(&Bytes::copy_from_slice(&frame)));

        let greeting_len = BytesMut::from(ZmqGreeting::default()).len();
        let encoded_frame_len = input_len - greeting_len;
        let initial_prefetched_frame_bytes = INITIAL_READ_CHUNK_SIZE - greeting_len;
        let remaining_frame_bytes = encoded_frame_len - initial_prefetched_frame_bytes;
        assert_eq!(
            *requested_sizes.lock().unwrap(),
            vec![INITIAL_READ_CHUNK_SIZE, remaining_frame_bytes]
        );
    }
}
