//! The TCP connection under each TLS connection of the socket runner, and
//! which end closes it first.
//!
//! The end that sends the first FIN holds the connection's TIME_WAIT (RFC
//! 9293 section 3.6), and a client in TIME_WAIT keeps its port for a
//! minute: on new connections a client would run out of ports. So a TLS
//! client's TCP stream ([`Tcp::client`]) does not send FIN when its TLS
//! adapter shuts down: the client sends its close_notify only, the server
//! answers with its own close_notify and FIN (it closes first, and holds
//! the TIME_WAIT on its one listening port), and the client's FIN follows
//! when it drops the connection. A server's stream ([`Tcp::server`]) shuts
//! down as TCP does. Plaintext TCP has no close_notify: its client's FIN
//! comes first, and it holds the TIME_WAIT (docs/sockets.md, "Closing").

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
};

/// A TCP stream whose shutdown sends FIN (a server's) or nothing (a TLS
/// client's: see the module).
pub struct Tcp {
    inner: TcpStream,
    fin: bool,
}

impl Tcp {
    /// A server's stream: shutdown sends FIN.
    pub fn server(inner: TcpStream) -> Tcp {
        Tcp { inner, fin: true }
    }

    /// A TLS client's stream: shutdown sends nothing (the close_notify the
    /// adapter wrote before it is flushed); the FIN goes when it is dropped.
    pub fn client(inner: TcpStream) -> Tcp {
        Tcp { inner, fin: false }
    }
}

impl Tcp {
    /// Reads to the peer's FIN, after its close_notify (the TLS closure is
    /// done: nothing more may come). A reset in its place is the end too: a
    /// server that closes its socket with the client's close_notify unread
    /// sends one instead of FIN (nginx, closing after `Connection: close`,
    /// when the client's close_notify came first), and leaves no TIME_WAIT
    /// on either end. Errors: another of the socket's, or bytes after the
    /// close_notify.
    pub async fn until_fin(&mut self) -> io::Result<()> {
        use tokio::io::AsyncReadExt;
        let mut rest = [0u8; 1];
        match self.inner.read(&mut rest).await {
            Ok(0) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(()),
            Ok(_) => Err(io::Error::other("bytes after the peer's close_notify")),
            Err(e) => Err(e),
        }
    }

    /// Reads to the peer's FIN (or reset, as [`Tcp::until_fin`]) for a TLS
    /// library that cannot read after its own close_notify
    /// ([`super::Stream::reads_after_close_notify`]): what comes before
    /// must be nothing (the library had read the peer's close_notify
    /// already) or one TLS alert record (content type 21, RFC 5246 section
    /// 6.2.1), the peer's close_notify, checked by its type and length
    /// only (it is encrypted). Errors: other bytes, or the socket's.
    pub async fn until_alert_then_fin(&mut self) -> io::Result<()> {
        use tokio::io::AsyncReadExt;
        // An encrypted alert: its 2 bytes, an explicit nonce, a tag.
        const LONGEST: usize = 5 + 2 + 8 + 16;
        let mut rest = Vec::new();
        let mut buf = [0u8; LONGEST + 1];
        loop {
            match self.inner.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
                Err(e) => return Err(e),
            }
            if rest.len() > LONGEST {
                break;
            }
        }
        match rest[..] {
            [] => Ok(()),
            [21, 3, 3, hi, lo, ref body @ ..] if body.len() == usize::from(u16::from_be_bytes([hi, lo])) => {
                Ok(())
            }
            _ => Err(io::Error::other(format!(
                "{} bytes after this side's close_notify, not the peer's alert record",
                rest.len()
            ))),
        }
    }
}

impl AsyncRead for Tcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.fin { Pin::new(&mut self.inner).poll_shutdown(cx) } else { Poll::Ready(Ok(())) }
    }
}
