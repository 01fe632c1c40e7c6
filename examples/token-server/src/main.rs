//! A small HTTP service on 127.0.0.1 that mints session tokens from scalrand's cryptographic
//! pools and hashes uploads without starving its other requests.
//!
//! ```text
//! cargo run -p scalrand-example-token-server        # http://127.0.0.1:3000
//! curl http://127.0.0.1:3000/token                   # 32 random bytes, hex
//! curl --data-binary @big.iso http://127.0.0.1:3000/hash
//! curl http://127.0.0.1:3000/shutdown
//! ```
//!
//! | Route | Answer |
//! |---|---|
//! | `GET /token` | 32 bytes from [`scalrand::fill_bytes`] as 64 lowercase hex digits |
//! | `GET /ping` | `pong`: the latency probe |
//! | `POST /hash` | hex SHA-256 of the body, hashed with [`digest_async`]: at most 64 KiB per poll, any runtime |
//! | `POST /hash-tokio` | the same with [`digest_tokio`]: tokio's coop budget, up to 512 KiB per poll |
//! | `POST /hash-blocking` | the same digest from one `Sha256::digest` call: the anti-pattern, for comparison |
//! | `GET /shutdown` | `bye`, then the server stops (in-flight requests finish first) |
//!
//! The hash routes add `x-pings-during-hash` (pings answered while this body was being
//! hashed), `x-hash-polls` (polls the hashing took) and `x-hash-micros` (wall time from the
//! first to the last byte hashed, other tasks' turns included) to their answer.
//!
//! # Why a current-thread runtime
//! The whole server runs on **one** thread, as an embedded service or a sidecar often does,
//! so the point shows plainly: `/hash-blocking` holds that thread for the whole digest
//! (BENCHMARKS.md, "scalrand-simd-chunk", has the times) and no `/ping` is answered meanwhile;
//! `/hash` returns `Pending` every 64 KiB, so pings keep being answered between polls. A
//! multi-thread runtime hides the problem until as many large uploads arrive as it has
//! workers.
//!
//! # Options
//! `--port N` (or the `TOKEN_SERVER_PORT` environment variable; default 3000, `0` picks a
//! free port; the bound address is printed either way), `--max-seconds S` (stop after S
//! seconds), `--max-body BYTES` (largest upload, default 512 MiB), `--event-interval N`
//! (tokio's scheduler ticks between I/O polls, default 61; see below). The server only
//! listens on the loopback address: `/shutdown` has no authentication.
//!
//! # The other half of the latency: tokio's `event_interval`
//! A future that returns `Pending` after waking itself goes straight back on the run queue;
//! while that queue is never empty, a current-thread runtime looks for new I/O (here: the
//! next ping) only every `event_interval` ticks, 61 by default. So a ping waits up to 61
//! hashing polls, 61 × 64 KiB ≈ 4 MiB of SHA-256, instead of one: a few milliseconds rather
//! than tens of microseconds. Two ways out, both measured in `BENCHMARKS.md`:
//! `--event-interval 1` (poll I/O after every task), or `/hash-tokio`, whose
//! [`digest_tokio`] spends tokio's coop budget and is woken through tokio's *deferred* list,
//! which the runtime only drains after polling I/O.
//!
//! # Bad inputs
//! | Input | Answer |
//! |---|---|
//! | unknown path | `404 Not Found` |
//! | wrong method on a known path | `405 Method Not Allowed` |
//! | body larger than `--max-body` (declared or streamed) | `413 Payload Too Large`, nothing hashed |
//! | body that breaks off (connection error) | `400 Bad Request` when the client can still read it |
//! | unknown option, a value that is not a number, `--event-interval 0` | message on stderr, exit status 2 |
//! | port already in use | message on stderr, exit status 1 |

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use scalrand::simd_chunk::{digest_async, digest_tokio};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Default port.
pub const DEFAULT_PORT: u16 = 3000;
/// Default upload limit: 512 MiB.
pub const DEFAULT_MAX_BODY: usize = 512 << 20;
/// Bytes in a session token.
pub const TOKEN_BYTES: usize = 32;
/// How long in-flight requests may take to finish once a shutdown was asked for.
const DRAIN: Duration = Duration::from_secs(10);

/// What the command line and environment asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Stop by itself after this long.
    pub max_seconds: Option<u64>,
    /// Largest accepted upload, bytes.
    pub max_body: usize,
    /// tokio's `event_interval`: scheduler ticks between two I/O polls while tasks are
    /// runnable (`None`: tokio's default, 61).
    pub event_interval: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: DEFAULT_PORT,
            max_seconds: None,
            max_body: DEFAULT_MAX_BODY,
            event_interval: None,
        }
    }
}

/// Reads the options (after the program name) and the `TOKEN_SERVER_PORT` value; `--port`
/// wins over the variable. `Ok(None)` means `--help`.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
    env_port: Option<String>,
) -> Result<Option<Config>, String> {
    fn number<T: std::str::FromStr>(opt: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{opt} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{opt}: `{v}` is not a valid number"))
    }
    let mut cfg = Config::default();
    if let Some(p) = env_port {
        cfg.port = number("TOKEN_SERVER_PORT", Some(p))?;
    }
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => cfg.port = number("--port", args.next())?,
            "--max-seconds" => cfg.max_seconds = Some(number("--max-seconds", args.next())?),
            "--max-body" => cfg.max_body = number("--max-body", args.next())?,
            "--event-interval" => match number("--event-interval", args.next())? {
                0 => return Err("--event-interval must be at least 1".into()),
                n => cfg.event_interval = Some(n),
            },
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown option `{other}` (try --help)")),
        }
    }
    Ok(Some(cfg))
}

/// Shared by every request.
#[derive(Debug)]
struct State {
    pings: AtomicU64,
    max_body: usize,
    shutdown: watch::Sender<bool>,
}

type Reply = Response<Full<Bytes>>;

fn text(status: StatusCode, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

/// Lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// A fresh session token: [`TOKEN_BYTES`] from the cryptographic pools, hex.
pub fn mint_token() -> String {
    let mut t = [0u8; TOKEN_BYTES];
    scalrand::fill_bytes(&mut t);
    hex(&t)
}

/// Reads the whole body, refusing more than `max` bytes (declared or actually sent).
async fn read_body(req: Request<Incoming>, max: usize) -> Result<Vec<u8>, Reply> {
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("body larger than {max} bytes\n"),
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    let mut body = req.into_body();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| text(StatusCode::BAD_REQUEST, format!("body read failed: {e}\n")))?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > max {
                return Err(too_large());
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf)
}

/// How a hash route runs the digest.
#[derive(Debug, Clone, Copy)]
enum HashMode {
    /// `/hash`: `digest_async`, 64 KiB per poll, `wake_by_ref` + `Pending` (any runtime).
    Async,
    /// `/hash-tokio`: `digest_tokio`, one unit of tokio's coop budget per 4 KiB.
    Tokio,
    /// `/hash-blocking`: one `Sha256::digest` call.
    Blocking,
}

/// The three hash routes: read the body, hash it as `mode` says.
async fn hash(req: Request<Incoming>, state: &State, mode: HashMode) -> Reply {
    let body = match read_body(req, state.max_body).await {
        Ok(b) => b,
        Err(reply) => return reply,
    };
    let pings_before = state.pings.load(Ordering::Relaxed);
    let started = std::time::Instant::now();
    let (digest, polls) = match mode {
        // Holds the runtime's only thread for the whole digest.
        HashMode::Blocking => (Sha256::digest(&body), 1),
        HashMode::Async => {
            // At most 64 KiB per poll, then `wake_by_ref` + `Pending`: other tasks run between.
            let mut hashing = digest_async::<Sha256>(&body);
            let digest = (&mut hashing).await;
            (digest, hashing.counters().yields + 1)
        }
        HashMode::Tokio => {
            // Up to 128 × 4 KiB per poll, then tokio's deferred wake: the runtime polls I/O
            // before it polls this task again.
            let mut hashing = digest_tokio::<Sha256>(&body);
            let digest = (&mut hashing).await;
            (digest, hashing.counters().yields + 1)
        }
    };
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let during = state.pings.load(Ordering::Relaxed) - pings_before;
    let mut r = text(StatusCode::OK, format!("{}\n", hex(&digest)));
    r.headers_mut().insert("x-pings-during-hash", during.into());
    r.headers_mut().insert("x-hash-polls", polls.into());
    r.headers_mut().insert("x-hash-micros", micros.into());
    r
}

async fn route(req: Request<Incoming>, state: Arc<State>) -> Result<Reply, Infallible> {
    let get = req.method() == Method::GET;
    let post = req.method() == Method::POST;
    let reply = match req.uri().path() {
        "/token" if get => text(StatusCode::OK, format!("{}\n", mint_token())),
        "/ping" if get => {
            state.pings.fetch_add(1, Ordering::Relaxed);
            text(StatusCode::OK, "pong\n")
        }
        "/hash" if post => hash(req, &state, HashMode::Async).await,
        "/hash-tokio" if post => hash(req, &state, HashMode::Tokio).await,
        "/hash-blocking" if post => hash(req, &state, HashMode::Blocking).await,
        "/shutdown" if get => {
            state.shutdown.send_replace(true);
            text(StatusCode::OK, "bye\n")
        }
        "/token" | "/ping" | "/hash" | "/hash-tokio" | "/hash-blocking" | "/shutdown" => {
            text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        }
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    };
    Ok(reply)
}

/// Serves `listener` until `/shutdown`, `max_seconds`, or `stop` resolves; then lets the
/// requests in flight finish (up to 10 s) and returns.
pub async fn serve(
    listener: TcpListener,
    config: &Config,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let (shutdown, mut shutdown_rx) = watch::channel(false);
    let state = Arc::new(State {
        pings: AtomicU64::new(0),
        max_body: config.max_body,
        shutdown,
    });
    let deadline = async {
        match config.max_seconds {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending().await,
        }
    };
    let mut deadline = pin!(deadline);
    let mut stop = pin!(stop);
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _peer) = match accepted {
                    Ok(a) => a,
                    // A connection that failed before we saw it (reset, out of descriptors):
                    // not the listener's fault; go on accepting.
                    Err(_) => continue,
                };
                let state = Arc::clone(&state);
                let mut rx = state.shutdown.subscribe();
                conns.spawn(async move {
                    let svc_state = Arc::clone(&state);
                    let svc = service_fn(move |req| route(req, Arc::clone(&svc_state)));
                    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
                    let mut conn = pin!(conn);
                    let mut draining = false;
                    loop {
                        tokio::select! {
                            // A broken connection concerns that client only.
                            _ = conn.as_mut() => break,
                            changed = rx.changed(), if !draining => {
                                if changed.is_err() || *rx.borrow() {
                                    conn.as_mut().graceful_shutdown();
                                    draining = true;
                                }
                            }
                        }
                    }
                });
            }
            // Reap finished connections so the set does not grow with every client.
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            changed = shutdown_rx.changed() => {
                if changed.is_err() || *shutdown_rx.borrow() {
                    break;
                }
            }
            () = &mut deadline => break,
            () = &mut stop => break,
        }
    }
    // Stop accepting, ask every connection to finish its request in flight and close.
    state.shutdown.send_replace(true);
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, async { while conns.join_next().await.is_some() {} }).await;
    Ok(())
}

/// Binds 127.0.0.1:`config.port`, tells `on_bound` the address, and serves on a
/// current-thread runtime until a shutdown (see [`serve`]).
pub fn run(
    config: &Config,
    on_bound: impl FnOnce(SocketAddr),
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let mut rt = tokio::runtime::Builder::new_current_thread();
    rt.enable_io().enable_time();
    if let Some(n) = config.event_interval {
        rt.event_interval(n);
    }
    let rt = rt.build()?;
    rt.block_on(async {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
        on_bound(listener.local_addr()?);
        serve(listener, config, stop).await
    })
}

fn main() -> std::process::ExitCode {
    cli(
        std::env::args().skip(1),
        std::env::var("TOKEN_SERVER_PORT").ok(),
    )
}

/// The command line: options after the program name and the `TOKEN_SERVER_PORT` value in,
/// exit status out (0 after a shutdown or `--help`, 1 if the port cannot be bound, 2 for a bad
/// option).
pub fn cli(
    args: impl IntoIterator<Item = String>,
    env_port: Option<String>,
) -> std::process::ExitCode {
    let cfg = match parse_args(args, env_port) {
        Ok(Some(c)) => c,
        Ok(None) => {
            println!(
                "token_server [--port N] [--max-seconds S] [--max-body BYTES] [--event-interval N]\n\
                 routes: GET /token, GET /ping, POST /hash, POST /hash-tokio, POST /hash-blocking, GET /shutdown"
            );
            return std::process::ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("token_server: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let res = run(
        &cfg,
        |addr| println!("token_server listening on http://{addr}"),
        std::future::pending(),
    );
    match res {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("token_server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
