//! A static file server on 127.0.0.1 that records every request it answers, to assert
//! how many requests a command made (zero offline, only what is new on a re-run).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Serves the files of a directory (`GET /PATH`), one request per connection; 404 for
/// anything missing. Stops when dropped.
pub struct CountingServer {
    pub url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl CountingServer {
    pub fn start(root: &Path) -> CountingServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let root = root.to_path_buf();
        let (seen, stopped) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (root, seen) = (root.clone(), seen.clone());
                std::thread::spawn(move || answer(stream, &root, &seen));
            }
        });
        CountingServer {
            url,
            requests,
            stop,
        }
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("request log").clone()
    }

    /// Forgets the requests seen so far.
    pub fn reset(&self) {
        self.requests.lock().expect("request log").clear();
    }
}

impl Drop for CountingServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

fn answer(mut stream: TcpStream, root: &Path, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
    seen.lock().expect("request log").push(path.clone());
    let relative = path.split('?').next().unwrap_or("").trim_start_matches('/');
    let file = root.join(relative);
    let response = match (relative.contains(".."), std::fs::read(&file)) {
        (false, Ok(body)) => {
            let mut head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            head.extend(body);
            head
        }
        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
    };
    let _ = stream.write_all(&response);
}
