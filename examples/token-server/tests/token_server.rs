//! Drives the token server (`src/main.rs`) in-process over loopback HTTP/1.1: concurrent token
//! requests, a large streamed upload hashed while a probe keeps pinging, the blocking variant
//! for comparison, the bad-input answers and the shutdown.
//!
//! The client is a few lines of HTTP/1.1 over `std::net::TcpStream` (Content-Length bodies
//! only, which is all the server sends), so the test needs no HTTP client crate. Every socket
//! has a read/write timeout and the server a `max_seconds` backstop: nothing here can hang.
//!
//! Latency numbers are printed (`-- --nocapture`), not asserted: the one timing claim that is
//! asserted is structural (pings are answered *while* `/hash` runs, and never while
//! `/hash-blocking` runs, on the server's single thread).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)] // `main` and some helpers are only used by the example binary.
#[path = "../src/main.rs"]
mod token_server;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use token_server::{Config, parse_args};

/// Socket timeout: far above anything a healthy run needs, low enough to fail a hung test.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// Size of the large upload. Debug builds hash with an optimised sha2 (the workspace's
/// `.cargo/config.toml`), but hyper and the test's own copying run unoptimised.
const UPLOAD: usize = if cfg!(debug_assertions) {
    128 << 20
} else {
    256 << 20
};

struct Server {
    addr: SocketAddr,
    thread: JoinHandle<std::io::Result<()>>,
}

fn start(max_body: usize) -> Server {
    start_with(max_body, None)
}

fn start_with(max_body: usize, event_interval: Option<u32>) -> Server {
    let (tx, rx) = mpsc::channel();
    let cfg = Config {
        port: 0,
        // Backstop only: every test asks for /shutdown itself.
        max_seconds: Some(600),
        max_body,
        event_interval,
    };
    let thread = std::thread::spawn(move || {
        token_server::run(&cfg, |addr| tx.send(addr).unwrap(), std::future::pending())
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("server did not bind");
    Server { addr, thread }
}

impl Server {
    /// `GET /shutdown`, then the server thread must end by itself and the port must close.
    fn shutdown(self) {
        let r = Conn::open(self.addr).request("GET", "/shutdown", &[]);
        assert_eq!((r.status, r.body.as_slice()), (200, &b"bye\n"[..]));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.thread.is_finished() {
            assert!(Instant::now() < deadline, "server did not stop");
            std::thread::sleep(Duration::from_millis(10));
        }
        self.thread.join().unwrap().unwrap();
        assert!(
            TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).is_err(),
            "listener still open after shutdown"
        );
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap().trim_end()
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_nodelay(true).unwrap();
        Conn {
            reader: BufReader::new(s),
        }
    }

    fn request(&mut self, method: &str, path: &str, body: &[u8]) -> Response {
        self.send(method, path, body, body.len());
        self.read_response()
    }

    /// Sends a request head declaring `declared` body bytes, then `body` in 1 MiB writes.
    fn send(&mut self, method: &str, path: &str, body: &[u8], declared: usize) {
        let s = self.reader.get_mut();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nhost: test\r\ncontent-length: {declared}\r\n\r\n"
        )
        .unwrap();
        for chunk in body.chunks(1 << 20) {
            s.write_all(chunk).unwrap();
        }
        s.flush().unwrap();
    }

    fn read_response(&mut self) -> Response {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line
            .split(' ')
            .nth(1)
            .unwrap_or_else(|| panic!("bad status line {line:?}"))
            .parse()
            .unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').unwrap();
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("server answers with content-length");
        let mut body = vec![0u8; len];
        self.reader.read_exact(&mut body).unwrap();
        Response {
            status,
            headers,
            body,
        }
    }
}

fn unhex(s: &str) -> Vec<u8> {
    assert_eq!(s.len() % 2, 0, "odd hex length: {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn concurrent_tokens_are_32_random_unique_bytes() {
    let server = start(1 << 20);
    let addr = server.addr;
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Conn::open(addr);
                (0..32)
                    .map(|_| {
                        let r = c.request("GET", "/token", &[]);
                        assert_eq!(r.status, 200);
                        assert_eq!(r.header("content-type"), Some("text/plain"));
                        r.text().to_owned()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let tokens: Vec<String> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(tokens.len(), 256);
    let mut seen = HashSet::new();
    let mut ones = 0u32;
    for t in &tokens {
        assert_eq!(t.len(), 64, "{t}");
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        let raw = unhex(t);
        assert_eq!(raw.len(), 32);
        ones += raw.iter().map(|b| b.count_ones()).sum::<u32>();
        assert!(seen.insert(raw), "duplicate token {t}");
    }
    // 256 * 256 bits: the count of ones is Binomial(65536, 1/2), sd 128; 10 sd is a broken
    // generator, not bad luck.
    let bits = 256 * 256;
    assert!(ones.abs_diff(bits / 2) < 1280, "{ones} ones in {bits} bits");
    server.shutdown();
}

#[test]
fn bad_requests_get_typed_answers() {
    let server = start(1000);
    let mut c = Conn::open(server.addr);
    assert_eq!(c.request("GET", "/nope", &[]).status, 404);
    assert_eq!(c.request("POST", "/token", &[]).status, 405);
    assert_eq!(c.request("GET", "/hash", &[]).status, 405);
    assert_eq!(c.request("GET", "/hash-tokio", &[]).status, 405);
    assert_eq!(c.request("POST", "/ping", &[]).status, 405);
    // Within the limit: hashed. The empty body is the empty digest.
    let r = c.request("POST", "/hash", &[7u8; 1000]);
    assert_eq!(unhex(r.text()), Sha256::digest([7u8; 1000]).to_vec());
    let r = c.request("POST", "/hash-blocking", &[]);
    assert_eq!(unhex(r.text()), Sha256::digest([]).to_vec());
    let r = c.request("POST", "/hash-tokio", b"abc");
    assert_eq!(unhex(r.text()), Sha256::digest(b"abc").to_vec());
    // Declared over the limit: refused before a byte of the body is read (hyper then closes
    // the connection, as the body was not consumed).
    let mut c = Conn::open(server.addr);
    c.send("POST", "/hash", &[], 1001);
    assert_eq!(c.read_response().status, 413);
    let mut c = Conn::open(server.addr);
    assert_eq!(
        c.request("POST", "/hash-blocking", &[0u8; 1001]).status,
        413
    );
    // Streamed over the limit (chunked encoding, no length declared): 1000 bytes pass, the
    // 1001st is refused.
    let mut c = Conn::open(server.addr);
    let mut raw =
        b"POST /hash HTTP/1.1\r\nhost: test\r\ntransfer-encoding: chunked\r\n\r\n3e8\r\n".to_vec();
    raw.extend_from_slice(&[1u8; 1000]);
    raw.extend_from_slice(b"\r\n1\r\nx\r\n0\r\n\r\n");
    c.reader.get_mut().write_all(&raw).unwrap();
    assert_eq!(c.read_response().status, 413);
    // A body that breaks off (the client closes its sending side after 10 of 1000 bytes):
    // 400, and the answer still reaches the client.
    let mut c = Conn::open(server.addr);
    c.send("POST", "/hash", &[5u8; 10], 1000);
    c.reader
        .get_mut()
        .shutdown(std::net::Shutdown::Write)
        .unwrap();
    assert_eq!(c.read_response().status, 400);
    // The same stream one byte shorter is hashed.
    let mut c = Conn::open(server.addr);
    raw.truncate(raw.len() - b"1\r\nx\r\n0\r\n\r\n".len());
    raw.extend_from_slice(b"0\r\n\r\n");
    c.reader.get_mut().write_all(&raw).unwrap();
    let r = c.read_response();
    assert_eq!(unhex(r.text()), Sha256::digest([1u8; 1000]).to_vec());
    server.shutdown();
}

#[test]
fn options_and_their_bad_values() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let d = Config::default();
    assert_eq!(parse_args(args(&[]), None), Ok(Some(d.clone())));
    assert_eq!(d.port, 3000);
    let c = parse_args(
        args(&[
            "--port",
            "0",
            "--max-seconds",
            "5",
            "--max-body",
            "10",
            "--event-interval",
            "1",
        ]),
        Some("4000".into()),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (c.port, c.max_seconds, c.max_body, c.event_interval),
        (0, Some(5), 10, Some(1))
    );
    assert!(parse_args(args(&["--event-interval", "0"]), None).is_err());
    assert_eq!(
        parse_args(args(&[]), Some("4000".into()))
            .unwrap()
            .unwrap()
            .port,
        4000
    );
    assert_eq!(parse_args(args(&["--help"]), None), Ok(None));
    assert!(parse_args(args(&["--port", "70000"]), None).is_err());
    assert!(parse_args(args(&["--port"]), None).is_err());
    assert!(parse_args(args(&["--max-seconds", "-1"]), None).is_err());
    assert!(parse_args(args(&["--bogus"]), None).is_err());
    assert!(parse_args(args(&[]), Some("x".into())).is_err());
}

#[test]
fn command_line_exits_by_itself() {
    use std::process::ExitCode;
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // `--max-seconds` stops the server on its own.
    let t = Instant::now();
    let code = token_server::cli(args(&["--port", "0", "--max-seconds", "1"]), None);
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert_eq!(
        token_server::cli(args(&["--help"]), None),
        ExitCode::SUCCESS
    );
    assert_eq!(
        token_server::cli(args(&["--bogus"]), None),
        ExitCode::from(2)
    );
    assert_eq!(
        token_server::cli(args(&[]), Some("not-a-port".into())),
        ExitCode::from(2)
    );
    // A port that is taken: exit status 1, not a panic.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    assert_eq!(
        token_server::cli(args(&["--port", &port, "--max-seconds", "1"]), None),
        ExitCode::FAILURE
    );
}

/// Latency of the pings sent while an upload was in flight.
#[derive(Debug)]
struct Probe {
    answered: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

/// Pings over one keep-alive connection until `stop`, recording (sent at, latency).
fn probe(addr: SocketAddr, stop: Arc<AtomicBool>) -> JoinHandle<Vec<(Instant, Duration)>> {
    std::thread::spawn(move || {
        let mut c = Conn::open(addr);
        let mut v = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let t = Instant::now();
            let r = c.request("GET", "/ping", &[]);
            assert_eq!((r.status, r.text()), (200, "pong"));
            v.push((t, t.elapsed()));
        }
        v
    })
}

/// The pings that were in flight at some moment of `[from, to]`.
fn window(samples: &[(Instant, Duration)], from: Instant, to: Instant) -> Probe {
    let mut l: Vec<Duration> = samples
        .iter()
        .filter(|&&(t, d)| t <= to && t + d >= from)
        .map(|&(_, d)| d)
        .collect();
    l.sort();
    let q = |p: f64| {
        l.get(((l.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    Probe {
        answered: l.len(),
        p50: q(0.5),
        p99: q(0.99),
        max: l.last().copied().unwrap_or_default(),
    }
}

struct Upload {
    digest: Vec<u8>,
    pings_during_hash: u64,
    polls: u64,
    /// Pings in flight during the whole request (body transfer and hash).
    probe: Probe,
    /// Pings in flight while the server hashed (its `x-hash-micros` before the answer).
    hash_probe: Probe,
    hash_time: Duration,
    elapsed: Duration,
}

/// Uploads `body` to `path` while a probe pings and another client mints tokens.
fn upload(addr: SocketAddr, path: &str, body: &[u8]) -> Upload {
    let stop = Arc::new(AtomicBool::new(false));
    let pinger = probe(addr, Arc::clone(&stop));
    let minter = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut c = Conn::open(addr);
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                assert_eq!(c.request("GET", "/token", &[]).text().len(), 64);
                n += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            n
        })
    };
    // Let the probe get going before the upload starts.
    std::thread::sleep(Duration::from_millis(50));
    let mut c = Conn::open(addr);
    let from = Instant::now();
    let r = c.request("POST", path, body);
    let to = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let samples = pinger.join().unwrap();
    minter.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let hash_time = Duration::from_micros(r.header("x-hash-micros").unwrap().parse().unwrap());
    Upload {
        hash_probe: window(&samples, to - hash_time, to),
        hash_time,
        digest: unhex(r.text()),
        pings_during_hash: r.header("x-pings-during-hash").unwrap().parse().unwrap(),
        polls: r.header("x-hash-polls").unwrap().parse().unwrap(),
        probe: window(&samples, from, to),
        elapsed: to - from,
    }
}

#[test]
fn large_upload_is_hashed_while_the_probe_keeps_answering() {
    // A cheap deterministic body (not all one byte, so a dropped or repeated chunk shows).
    let mut body = vec![0u8; UPLOAD];
    for (i, chunk) in body.chunks_mut(8).enumerate() {
        let x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes();
        chunk.copy_from_slice(&x[..chunk.len()]);
    }
    let expected = Sha256::digest(&body).to_vec();

    let server = start(UPLOAD);
    let chunked = upload(server.addr, "/hash", &body);
    let coop = upload(server.addr, "/hash-tokio", &body);
    let blocking = upload(server.addr, "/hash-blocking", &body);
    server.shutdown();
    // The same chunked hash on a runtime that polls I/O after every task (no assertion on
    // the latency difference: it is printed for BENCHMARKS.md).
    let server = start_with(UPLOAD, Some(1));
    let chunked_ei1 = upload(server.addr, "/hash", &body);
    server.shutdown();

    assert_eq!(chunked.digest, expected);
    assert_eq!(blocking.digest, expected);
    assert_eq!(chunked_ei1.digest, expected);
    assert_eq!(coop.digest, expected);
    // The async digest returned `Pending` every 64 KiB.
    assert!(
        chunked.polls >= (UPLOAD / (64 << 10)) as u64,
        "{}",
        chunked.polls
    );
    assert_eq!(blocking.polls, 1);
    // The runtime has one thread: nothing else can run during a blocking digest...
    assert_eq!(blocking.pings_during_hash, 0);
    // ...while the chunked digest let the probe's pings through between its polls.
    for u in [&chunked, &chunked_ei1, &coop] {
        assert!(
            u.pings_during_hash >= 1,
            "no ping answered during the chunked hash"
        );
    }
    // And the probe kept answering during the whole upload (generous: a loaded 2-core machine).
    assert!(chunked.probe.answered >= 2, "{:?}", chunked.probe);

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "upload of {} MiB; /ping latency of the pings in flight:",
        UPLOAD >> 20
    );
    eprintln!(
        "| route | phase | duration ms | pings | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|"
    );
    for (name, u) in [
        ("/hash", &chunked),
        ("/hash, event_interval 1", &chunked_ei1),
        ("/hash-tokio", &coop),
        ("/hash-blocking", &blocking),
    ] {
        for (phase, d, p) in [
            ("whole request", u.elapsed, &u.probe),
            ("hashing", u.hash_time, &u.hash_probe),
        ] {
            eprintln!(
                "| `{name}` | {phase} | {:.1} | {} | {:.3} | {:.3} | {:.3} |",
                ms(d),
                p.answered,
                ms(p.p50),
                ms(p.p99),
                ms(p.max)
            );
        }
        eprintln!(
            "  ({name}: server counted {} pings during the hash, {} polls)",
            u.pings_during_hash, u.polls
        );
    }
}
