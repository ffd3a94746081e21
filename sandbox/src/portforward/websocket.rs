//! Port forwarding over WebSocket, in the two ways clients use it:
//!
//! - the channel protocol (`v4.channel.k8s.io`, base64 `v4.base64.channel.k8s.io`, or no
//!   subprotocol), which kube-rs speaks: the ports are named in the query, each gets a data
//!   channel (2i) and an error channel (2i+1), every message starts with its channel
//!   number, and the server's first message on each channel is the port, little-endian;
//! - SPDY tunnelled in binary messages (`SPDY/3.1+portforward.k8s.io`), which kubectl
//!   tries first: the messages' payloads are the bytes of a SPDY connection.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::ByteSink;
use super::forward::{self, Counted, PodRef};
use crate::cluster::Cluster;

/// The prefix kubectl puts before the SPDY protocol it tunnels.
pub const TUNNEL_PREFIX: &str = "SPDY/3.1+";
pub const CHANNEL_V4: &str = "v4.channel.k8s.io";
pub const BASE64_CHANNEL_V4: &str = "v4.base64.channel.k8s.io";

/// Largest message accepted from a client (kubectl and kube-rs send at most 32 KiB).
const MAX_MESSAGE: usize = 1 << 20;

const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the request asks for a WebSocket upgrade.
pub fn is_upgrade(headers: &hyper::HeaderMap) -> bool {
    let has = |name: &str, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .unwrap_or("")
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    };
    has("connection", "upgrade") && has("upgrade", "websocket")
}

/// The subprotocols a client offers, in its order (one comma-separated header or many).
pub fn subprotocols(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all("sec-websocket-protocol")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `Sec-WebSocket-Accept` for a client's key.
pub fn accept_key(key: &[u8]) -> String {
    tokio_tungstenite::tungstenite::handshake::derive_accept_key(key)
}

pub async fn server<S>(io: S) -> WebSocketStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await
}

/// The payloads of a tunnel's binary messages as one byte stream, ending at a close.
pub fn tunnel_input<S>(
    stream: SplitStream<WebSocketStream<S>>,
) -> Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    Box::pin(futures::stream::unfold(stream, |mut s| async move {
        loop {
            match s.next().await? {
                Ok(Message::Binary(b)) => return Some((Ok(b), s)),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }))
}

/// Writes bytes as binary messages, and closes with a normal close.
pub struct TunnelSink<S>(pub SplitSink<WebSocketStream<S>, Message>);

impl<S> ByteSink for TunnelSink<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn send(&mut self, bytes: Bytes) -> io::Result<()> {
        self.0
            .send(Message::Binary(bytes))
            .await
            .map_err(io::Error::other)
    }

    async fn close(&mut self) {
        let _ = self.0.send(normal_close()).await;
        let _ = self.0.close().await;
    }
}

fn normal_close() -> Message {
    Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    }))
}

/// Serves the channel protocol for `ports` until every port's connection is done or the
/// client closes.
pub async fn serve_channels<S>(
    ws: WebSocketStream<S>,
    base64: bool,
    ports: Vec<u16>,
    cluster: Arc<Cluster>,
    pod: PodRef,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let _live = Counted::session();
    let (sink, mut stream) = ws.split();
    let (out_tx, out_rx) = mpsc::channel::<(u8, Bytes)>(64);
    let mut writer = tokio::spawn(write_channels(out_rx, sink, base64));
    let mut inputs = Vec::with_capacity(ports.len());
    let mut tasks = JoinSet::new();
    for (i, &port) in ports.iter().enumerate() {
        let data = (2 * i) as u8;
        let prefix = Bytes::copy_from_slice(&port.to_le_bytes());
        let _ = out_tx.send((data, prefix.clone())).await;
        let _ = out_tx.send((data + 1, prefix)).await;
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        inputs.push(tx);
        let cluster = Arc::clone(&cluster);
        let pod = pod.clone();
        let out = out_tx.clone();
        tasks.spawn(async move {
            let _live = Counted::connection();
            match forward::connect(&cluster, &pod, port).await {
                Ok(target) => forward::pump(target, rx, out, move |b| (data, b)).await,
                Err(message) => {
                    let _ = out.send((data + 1, Bytes::from(message))).await;
                }
            }
        });
    }
    let mut writer_done = false;
    loop {
        tokio::select! {
            message = stream.next() => {
                let payload = match message {
                    Some(Ok(Message::Binary(b))) if !base64 => b,
                    Some(Ok(Message::Text(t))) if base64 => match decode_base64_message(t.as_str()) {
                        Some(b) => b,
                        None => continue,
                    },
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => continue,
                };
                let Some((&channel, data)) = payload.split_first() else { continue };
                // Only data channels carry client bytes; error channels are the server's.
                if channel % 2 == 0
                    && let Some(tx) = inputs.get(usize::from(channel / 2))
                    && !data.is_empty()
                {
                    let _ = tx.send(payload.slice(1..)).await;
                }
            }
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {
                if tasks.is_empty() {
                    break;
                }
            }
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    drop(out_tx);
    if !writer_done
        && tokio::time::timeout(FLUSH_TIMEOUT, &mut writer)
            .await
            .is_err()
    {
        writer.abort();
    }
}

/// `<digit channel><base64 data>`.
fn decode_base64_message(text: &str) -> Option<Bytes> {
    let mut chars = text.chars();
    let channel = chars.next()?.to_digit(10)? as u8;
    let data = base64::engine::general_purpose::STANDARD
        .decode(chars.as_str())
        .ok()?;
    let mut out = BytesMut::with_capacity(data.len() + 1);
    out.extend_from_slice(&[channel]);
    out.extend_from_slice(&data);
    Some(out.freeze())
}

async fn write_channels<S>(
    mut rx: mpsc::Receiver<(u8, Bytes)>,
    mut sink: SplitSink<WebSocketStream<S>, Message>,
    base64: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    while let Some((channel, data)) = rx.recv().await {
        let message = if base64 {
            let text = format!(
                "{}{}",
                channel,
                base64::engine::general_purpose::STANDARD.encode(&data)
            );
            Message::text(text)
        } else {
            let mut b = BytesMut::with_capacity(data.len() + 1);
            b.extend_from_slice(&[channel]);
            b.extend_from_slice(&data);
            Message::Binary(b.freeze())
        };
        if sink.send(message).await.is_err() {
            return;
        }
    }
    let _ = sink.send(normal_close()).await;
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_subprotocols_split_on_commas() {
        let mut h = hyper::HeaderMap::new();
        h.append(
            "sec-websocket-protocol",
            "v5.channel.k8s.io, v4.channel.k8s.io".parse().unwrap(),
        );
        h.append("sec-websocket-protocol", "x".parse().unwrap());
        assert_eq!(
            subprotocols(&h),
            vec!["v5.channel.k8s.io", "v4.channel.k8s.io", "x"]
        );
        h.insert("connection", "keep-alive, Upgrade".parse().unwrap());
        h.insert("upgrade", "websocket".parse().unwrap());
        assert!(is_upgrade(&h));
    }

    #[test]
    fn base64_messages_carry_their_channel_first() {
        let b = decode_base64_message("0aGk=").unwrap();
        assert_eq!(&b[..], &[0, b'h', b'i']);
        assert!(decode_base64_message("x").is_none());
    }
}
