//! The kubelet's SPDY port-forward protocol (`portforward.k8s.io`): the client opens, per
//! forwarded connection, an error stream and a data stream that share a `requestid` and
//! name the `port`; once both are there the connection is made and the data stream
//! carries its bytes; a failure is written on the error stream. Both streams then end.

pub mod frame;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::ByteSink;
use super::forward::{self, Counted, PodRef};
use crate::cluster::Cluster;
use frame::{Frame, Writer};

/// Chunks of client data buffered per stream before the session stops reading.
const STREAM_BUFFER: usize = 16;

/// How long the session waits for its last frames to be written once the client left.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the session writes, serialised in order by one writer (the header compression
/// context is shared by every frame of the connection).
#[derive(Debug)]
enum Out {
    Reply(u32),
    Data(u32, Bytes, bool),
    Reset(u32, u32),
    Ping(u32),
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Error,
    Data,
}

struct StreamState {
    kind: Kind,
    /// Where the client's data for a data stream goes, until it half-closes.
    to_target: Option<mpsc::Sender<Bytes>>,
    /// Ends the forwarded connection when the client resets the data stream.
    cancel: Option<oneshot::Sender<()>>,
    /// The forwarded connection has started (its buffer is drained).
    paired: bool,
}

#[derive(Default)]
struct Pair {
    port: u16,
    error: Option<u32>,
    data: Option<(u32, mpsc::Receiver<Bytes>, oneshot::Receiver<()>)>,
}

/// Serves one upgraded connection until the client closes it.
pub async fn serve<S, K>(input: S, sink: K, cluster: Arc<Cluster>, pod: PodRef)
where
    S: Stream<Item = io::Result<Bytes>> + Unpin + Send,
    K: ByteSink,
{
    let _live = Counted::session();
    let (out_tx, out_rx) = mpsc::channel::<Out>(64);
    let mut writer = tokio::spawn(write_frames(out_rx, sink));
    let mut session = Session {
        cluster,
        pod,
        out: out_tx,
        streams: HashMap::new(),
        pairs: HashMap::new(),
        tasks: JoinSet::new(),
        last_stream: 0,
        going_away: false,
    };
    let mut input = input;
    let mut reader = frame::Reader::default();
    let mut writer_done = false;
    'read: loop {
        tokio::select! {
            chunk = input.next() => {
                let Some(Ok(chunk)) = chunk else { break };
                reader.feed(&chunk);
                loop {
                    match reader.next_frame() {
                        Ok(Some(f)) => {
                            if session.on_frame(f).await.is_err() {
                                break 'read;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!(error = %e, "port-forward: bad SPDY frame");
                            break 'read;
                        }
                    }
                }
            }
            Some(done) = session.tasks.join_next(), if !session.tasks.is_empty() => {
                if let Ok((data, error)) = done {
                    session.streams.remove(&data);
                    session.streams.remove(&error);
                }
            }
            _ = &mut writer => {
                writer_done = true;
                break;
            }
        }
    }
    // The client is gone (or broke the protocol): end every forwarded connection.
    session.tasks.abort_all();
    while session.tasks.join_next().await.is_some() {}
    let Session { out, .. } = session;
    drop(out);
    if !writer_done
        && tokio::time::timeout(FLUSH_TIMEOUT, &mut writer)
            .await
            .is_err()
    {
        writer.abort();
    }
}

struct Session {
    cluster: Arc<Cluster>,
    pod: PodRef,
    out: mpsc::Sender<Out>,
    streams: HashMap<u32, StreamState>,
    pairs: HashMap<String, Pair>,
    tasks: JoinSet<(u32, u32)>,
    last_stream: u32,
    going_away: bool,
}

/// The writer is gone: the connection can carry nothing more.
struct Closed;

impl Session {
    async fn send(&self, out: Out) -> Result<(), Closed> {
        self.out.send(out).await.map_err(|_| Closed)
    }

    async fn on_frame(&mut self, f: Frame) -> Result<(), Closed> {
        match f {
            Frame::SynStream {
                stream_id, headers, ..
            } => self.on_syn_stream(stream_id, &headers).await,
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                let Some(s) = self.streams.get_mut(&stream_id) else {
                    return Ok(());
                };
                if !data.is_empty()
                    && let Some(tx) = &s.to_target
                {
                    if s.paired {
                        // Backpressure: a slow target slows reading the connection.
                        let _ = tx.send(data).await;
                    } else if tx.try_send(data).is_err() {
                        // Data piling up for a stream whose partner never came.
                        self.streams.remove(&stream_id);
                        return self
                            .send(Out::Reset(stream_id, frame::RST_PROTOCOL_ERROR))
                            .await;
                    }
                }
                if fin && let Some(s) = self.streams.get_mut(&stream_id) {
                    s.to_target = None;
                }
                Ok(())
            }
            Frame::RstStream { stream_id, .. } => {
                if let Some(s) = self.streams.get_mut(&stream_id) {
                    s.to_target = None;
                    if let Some(c) = s.cancel.take() {
                        let _ = c.send(());
                    }
                }
                Ok(())
            }
            Frame::Ping(id) => self.send(Out::Ping(id)).await,
            Frame::GoAway => {
                self.going_away = true;
                Ok(())
            }
            Frame::Ignored => Ok(()),
        }
    }

    async fn on_syn_stream(&mut self, id: u32, headers: &[(String, String)]) -> Result<(), Closed> {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or("")
        };
        if id.is_multiple_of(2) || id <= self.last_stream {
            return self.send(Out::Reset(id, frame::RST_PROTOCOL_ERROR)).await;
        }
        self.last_stream = id;
        if self.going_away {
            return self.send(Out::Reset(id, frame::RST_REFUSED_STREAM)).await;
        }
        // The kubelet's checks; a stream failing them is reset.
        let port = header("port").parse::<u16>().ok().filter(|p| *p > 0);
        let kind = match header("streamtype") {
            "error" => Some(Kind::Error),
            "data" => Some(Kind::Data),
            _ => None,
        };
        let (Some(port), Some(kind)) = (port, kind) else {
            return self.send(Out::Reset(id, frame::RST_CANCEL)).await;
        };
        // Clients before request ids paired streams by id: error N, data N+2.
        let request = match header("requestid") {
            "" if kind == Kind::Error => id.to_string(),
            "" => id.saturating_sub(2).to_string(),
            r => r.to_string(),
        };
        self.send(Out::Reply(id)).await?;
        let pair = self.pairs.entry(request.clone()).or_default();
        pair.port = port;
        let mut state = StreamState {
            kind,
            to_target: None,
            cancel: None,
            paired: false,
        };
        match kind {
            Kind::Error => pair.error = Some(id),
            Kind::Data => {
                let (tx, rx) = mpsc::channel(STREAM_BUFFER);
                let (cancel_tx, cancel_rx) = oneshot::channel();
                state.to_target = Some(tx);
                state.cancel = Some(cancel_tx);
                pair.data = Some((id, rx, cancel_rx));
            }
        }
        self.streams.insert(id, state);
        if pair.error.is_some() && pair.data.is_some() {
            let pair = self.pairs.remove(&request).unwrap_or_default();
            self.start(pair);
        }
        Ok(())
    }

    fn start(&mut self, pair: Pair) {
        let (Some(error), Some((data, rx, cancel))) = (pair.error, pair.data) else {
            return;
        };
        for id in [error, data] {
            if let Some(s) = self.streams.get_mut(&id) {
                s.paired = true;
            }
        }
        debug_assert!(
            self.streams
                .get(&error)
                .is_some_and(|s| s.kind == Kind::Error)
        );
        let cluster = Arc::clone(&self.cluster);
        let pod = self.pod.clone();
        let out = self.out.clone();
        let port = pair.port;
        self.tasks.spawn(async move {
            let _live = Counted::connection();
            tokio::select! {
                () = forward_one(&cluster, &pod, port, error, data, rx, out.clone()) => {}
                _ = cancel => {}
            }
            // As the kubelet: the error stream closes, then the data stream.
            let _ = out.send(Out::Data(error, Bytes::new(), true)).await;
            let _ = out.send(Out::Data(data, Bytes::new(), true)).await;
            (data, error)
        });
    }
}

async fn forward_one(
    cluster: &Cluster,
    pod: &PodRef,
    port: u16,
    error: u32,
    data: u32,
    rx: mpsc::Receiver<Bytes>,
    out: mpsc::Sender<Out>,
) {
    match forward::connect(cluster, pod, port).await {
        Ok(stream) => {
            forward::pump(stream, rx, out, move |b| Out::Data(data, b, false)).await;
        }
        Err(message) => {
            let _ = out
                .send(Out::Data(error, Bytes::from(message), false))
                .await;
        }
    }
}

/// Serialises frames in order, batching what is already queued into one write.
async fn write_frames<K: ByteSink>(mut rx: mpsc::Receiver<Out>, mut sink: K) {
    let mut writer = Writer::default();
    let mut buf = BytesMut::new();
    while let Some(first) = rx.recv().await {
        encode(&mut writer, &mut buf, first);
        while buf.len() < 64 * 1024 {
            match rx.try_recv() {
                Ok(next) => encode(&mut writer, &mut buf, next),
                Err(_) => break,
            }
        }
        if sink.send(buf.split().freeze()).await.is_err() {
            return;
        }
    }
    sink.close().await;
}

fn encode(writer: &mut Writer, buf: &mut BytesMut, out: Out) {
    match out {
        Out::Reply(id) => writer.syn_reply(buf, id),
        Out::Data(id, data, fin) => Writer::data(buf, id, &data, fin),
        Out::Reset(id, status) => Writer::rst_stream(buf, id, status),
        Out::Ping(id) => Writer::ping(buf, id),
    }
}

#[cfg(test)]
mod tests {
    use super::frame::tests::ClientWriter;
    use super::*;
    use crate::cluster::WriteOptions;
    use crate::portforward::{FORWARD_ANNOTATION, IoSink};
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A cluster with a running pod `web` whose port 8080 is an echo server.
    async fn cluster_with_echo() -> Arc<Cluster> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        let cluster = Cluster::new(Default::default(), crate::store::Store::new());
        let opts = WriteOptions {
            manager: "test".into(),
            ..WriteOptions::default()
        };
        let ns = cluster.resource("", "namespaces", "", "");
        cluster
            .create(&ns, json!({"metadata": {"name": "default"}}), &opts)
            .unwrap();
        let pods = cluster.resource("", "pods", "default", "");
        cluster
            .create(
                &pods,
                json!({"metadata": {"name": "web", "annotations": {FORWARD_ANNOTATION: format!("8080={addr}")}},
                       "spec": {"nodeName": "n", "containers": [{"name": "app", "image": "x"}]}}),
                &opts,
            )
            .unwrap();
        let web = cluster.resource("", "pods", "default", "web");
        cluster
            .mutate(&web, "test", |p| {
                p["status"]["phase"] = json!("Running");
                true
            })
            .unwrap();
        cluster
    }

    /// Reads frames until `until` holds for what was read so far.
    async fn read_until(
        io: &mut tokio::io::ReadHalf<tokio::io::DuplexStream>,
        reader: &mut frame::Reader,
        seen: &mut Vec<Frame>,
        until: impl Fn(&[Frame]) -> bool,
    ) {
        let mut buf = [0u8; 4096];
        while !until(seen) {
            while let Some(f) = reader.next_frame().unwrap() {
                seen.push(f);
            }
            if until(seen) {
                return;
            }
            let n = io.read(&mut buf).await.unwrap();
            assert!(n > 0, "the session closed early: {seen:?}");
            reader.feed(&buf[..n]);
        }
    }

    fn fin_on(seen: &[Frame], id: u32) -> bool {
        seen.iter()
            .any(|f| matches!(f, Frame::Data { stream_id, fin: true, .. } if *stream_id == id))
    }

    fn data_on(seen: &[Frame], id: u32) -> Vec<u8> {
        seen.iter()
            .filter_map(|f| match f {
                Frame::Data {
                    stream_id, data, ..
                } if *stream_id == id => Some(data.to_vec()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    #[tokio::test]
    async fn a_session_forwards_reports_errors_and_ends_with_its_client() {
        let cluster = cluster_with_echo().await;
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (srd, swr) = tokio::io::split(server);
        let pod = PodRef {
            namespace: "default".into(),
            name: "web".into(),
        };
        let session = tokio::spawn(serve(
            tokio_util::io::ReaderStream::new(srd),
            IoSink(swr),
            cluster,
            pod,
        ));
        let (mut crd, mut cwr) = tokio::io::split(client);
        let mut w = ClientWriter::new();
        let mut reader = frame::Reader::default();
        let mut seen = Vec::new();

        // A connection to the echo server: what goes out comes back on the data stream.
        let mut out = BytesMut::new();
        let h = |t: &'static str, port: &'static str| {
            [("streamtype", t), ("port", port), ("requestid", "0")]
        };
        out.extend_from_slice(&w.syn_stream(1, &h("error", "8080")));
        out.extend_from_slice(&w.syn_stream(3, &h("data", "8080")));
        Writer::data(&mut out, 1, b"", true);
        Writer::data(&mut out, 3, b"ping", true);
        Writer::ping(&mut out, 11);
        cwr.write_all(&out).await.unwrap();
        read_until(&mut crd, &mut reader, &mut seen, |s| {
            fin_on(s, 1) && fin_on(s, 3) && s.contains(&Frame::Ping(11))
        })
        .await;
        assert_eq!(data_on(&seen, 3), b"ping");
        assert!(data_on(&seen, 1).is_empty());

        // A port the annotation does not name: the kubelet's message on the error stream.
        let mut out = BytesMut::new();
        let h2 = [
            ("streamtype", "error"),
            ("port", "9090"),
            ("requestid", "1"),
        ];
        let d2 = [("streamtype", "data"), ("port", "9090"), ("requestid", "1")];
        out.extend_from_slice(&w.syn_stream(5, &h2));
        out.extend_from_slice(&w.syn_stream(7, &d2));
        cwr.write_all(&out).await.unwrap();
        seen.clear();
        read_until(&mut crd, &mut reader, &mut seen, |s| {
            fin_on(s, 5) && fin_on(s, 7)
        })
        .await;
        let message = String::from_utf8(data_on(&seen, 5)).unwrap();
        assert!(
            message.starts_with("error forwarding port 9090 to pod "),
            "{message}"
        );

        // A stream without a port is refused with a reset.
        let out = w.syn_stream(9, &[("streamtype", "data")]);
        cwr.write_all(&out).await.unwrap();
        seen.clear();
        read_until(&mut crd, &mut reader, &mut seen, |s| {
            s.iter()
                .any(|f| matches!(f, Frame::RstStream { stream_id: 9, .. }))
        })
        .await;

        // An open forwarded connection, then the client goes away: the session ends
        // and takes the connection with it.
        let out = [
            w.syn_stream(
                11,
                &[
                    ("streamtype", "error"),
                    ("port", "8080"),
                    ("requestid", "2"),
                ],
            ),
            w.syn_stream(
                13,
                &[("streamtype", "data"), ("port", "8080"), ("requestid", "2")],
            ),
        ]
        .concat();
        cwr.write_all(&out).await.unwrap();
        drop((crd, cwr));
        session.await.unwrap();
    }
}
