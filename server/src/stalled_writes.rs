//! Connections whose client stopped reading are closed. An event stream's frames wait in the
//! socket's buffers while its client does not read; no other stream waits for it (the bus never
//! waits for a receiver, and a stream that fell behind reads its gap from the store), but it
//! would hold its buffers and its task for as long as the connection lives. So a write that
//! makes no progress for `COUNTERSIGN_WRITE_STALL_MS` fails, hyper closes the connection, and the
//! client — once it reads again — reconnects and resumes with `Last-Event-ID`.

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    task::{Context, Poll, ready},
    time::Duration,
};

use axum::{
    extract::connect_info::Connected,
    serve::{IncomingStream, Listener},
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
    time::{Sleep, sleep},
};

/// A listener whose connections fail a write that stalls for longer than `limit`.
pub struct StallLimit<L> {
    pub inner: L,
    pub limit: Duration,
}

impl<L: Listener<Io = TcpStream>> Listener for StallLimit<L> {
    type Io = StallLimited;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = self.inner.accept().await;
        (StallLimited { io, limit: self.limit, stalled: None }, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// The client's address as `ConnectInfo` carries it for this listener's connections (axum
/// implements `Connected` for `SocketAddr` only on its own listeners).
#[derive(Clone, Copy, Debug)]
pub struct PeerAddr(pub SocketAddr);

impl<L: Listener<Io = TcpStream, Addr = SocketAddr>> Connected<IncomingStream<'_, StallLimit<L>>> for PeerAddr {
    fn connect_info(stream: IncomingStream<'_, StallLimit<L>>) -> Self {
        PeerAddr(*stream.remote_addr())
    }
}

/// A connection that times its writes while they cannot proceed.
pub struct StallLimited {
    io: TcpStream,
    limit: Duration,
    /// Since when a write has been waiting for room (only while one waits: no timer otherwise).
    stalled: Option<Pin<Box<Sleep>>>,
}

impl StallLimited {
    /// `written` is the inner write's outcome: progress clears the stall, waiting starts or
    /// checks its clock.
    fn timed<T>(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let limit = self.limit;
        ready!(self.stalled.get_or_insert_with(|| Box::pin(sleep(limit))).as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the client took nothing written to it for too long")))
    }
}

impl AsyncRead for StallLimited {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for StallLimited {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.timed(cx, written)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.timed(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::{convert::Infallible, time::Duration};

    use axum::{Router, body::Body, routing::get};
    use bytes::Bytes;
    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::{TcpSocket, TcpStream},
        time::{Instant, timeout},
    };

    use super::{PeerAddr, StallLimit};

    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n";

    /// A client that stops reading is disconnected once the server's writes to it have waited
    /// for the limit; one that keeps reading an endless response is not.
    #[tokio::test]
    async fn a_client_that_stops_reading_is_disconnected_and_one_that_reads_is_not() {
        // Accepted sockets inherit the listener's small send buffer, so a stalled client fills it
        // within kilobytes (the kernel would otherwise grow it to megabytes).
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_send_buffer_size(8192).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(16).unwrap();
        let addr = listener.local_addr().unwrap();
        let endless =
            || async { Body::from_stream(futures::stream::repeat_with(|| Ok::<_, Infallible>(Bytes::from_static(&[b'x'; 1024])))) };
        let app = Router::new().route("/", get(endless));
        let limited = StallLimit { inner: listener, limit: Duration::from_millis(300) };
        tokio::spawn(async move { axum::serve(limited, app.into_make_service_with_connect_info::<PeerAddr>()).await });

        let client = TcpSocket::new_v4().unwrap();
        client.set_recv_buffer_size(4096).unwrap();
        let mut stalled = client.connect(addr).await.unwrap();
        stalled.write_all(REQUEST).await.unwrap();
        let mut reading = TcpStream::connect(addr).await.unwrap();
        reading.write_all(REQUEST).await.unwrap();

        // Well past the limit, the reading client still gets bytes.
        let mut buffer = vec![0u8; 64 * 1024];
        let until = Instant::now() + Duration::from_millis(1_500);
        while Instant::now() < until {
            let n = timeout(Duration::from_secs(5), reading.read(&mut buffer)).await.expect("bytes keep coming").unwrap();
            assert!(n > 0, "the reading client was disconnected");
        }
        // The stalled one was dropped meanwhile: reading it now ends after what was buffered
        // (an endless response would never end).
        let ended = timeout(Duration::from_secs(5), async {
            while let Ok(n) = stalled.read(&mut buffer).await
                && n > 0
            {}
        })
        .await;
        assert!(ended.is_ok(), "the stalled client is still connected");
    }
}
