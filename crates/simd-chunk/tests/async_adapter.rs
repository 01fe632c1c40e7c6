//! The async adapter (feature `async`) and tokio's coop budget (feature `tokio`).
//! Run with `cargo test -p scalrand-simd-chunk --all-features`.

// Test helpers outside #[test] fns unwrap and assert too; clippy.toml only exempts #[test] bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(all(feature = "async", feature = "std", not(scalrand_loom)))]

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use digest::Digest;
use scalrand_simd_chunk::{
    AsyncPreempt, Hashing, Policy, PollBudget, PollTimeBudget, digest_async, digest_reader,
    digest_stream,
};
use sha2::{Sha256, Sha512};

struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `fut` to completion on this thread; returns the output, the number of polls and the
/// number of wakes. Asserts that every `Pending` was preceded by a wake (no lost wake-ups).
fn block_on_counting<F: Future + Unpin>(mut fut: F) -> (F::Output, usize, usize) {
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut polls = 0;
    loop {
        polls += 1;
        let before = counter.0.load(Ordering::SeqCst);
        match Pin::new(&mut fut).poll(&mut cx) {
            Poll::Ready(out) => return (out, polls, counter.0.load(Ordering::SeqCst)),
            Poll::Pending => assert!(
                counter.0.load(Ordering::SeqCst) > before,
                "Pending without a wake"
            ),
        }
    }
}

#[test]
fn digest_async_equals_one_shot_and_yields_per_budget() {
    for len in [0usize, 1, 4095, 4096, 4097, 65_536, 65_537, 1_000_003] {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let fut = digest_async::<Sha256>(&data);
        let (out, polls, wakes) = block_on_counting(fut);
        assert_eq!(out, Sha256::digest(&data), "len {len}");
        // 64 KiB per poll: a poll ends when the check after 16 intervals finds the budget spent.
        let intervals = len.div_ceil(4096);
        let expected_polls = if intervals == 0 {
            1
        } else {
            (intervals - 1) / 16 + 1
        };
        assert_eq!(polls, expected_polls, "len {len}");
        assert_eq!(wakes, polls - 1);
    }
}

#[test]
fn counters_match_pending_returns() {
    let data = vec![5u8; 300_000];
    let mut fut = Hashing::<Sha512, _>::new(
        &data,
        Policy::new(1000).unwrap(),
        PollBudget::new(10_000).unwrap(),
    );
    let waker = Waker::from(Arc::new(CountingWaker(AtomicUsize::new(0))));
    let mut cx = Context::from_waker(&waker);
    let mut pendings = 0;
    let out = loop {
        match Pin::new(&mut fut).poll(&mut cx) {
            Poll::Ready(o) => break o,
            Poll::Pending => pendings += 1,
        }
    };
    assert_eq!(out, Sha512::digest(&data));
    let c = fut.counters();
    assert_eq!(c.yields, pendings);
    assert_eq!(c.checks, 299);
    assert_eq!(c.bytes, 300_000);
    assert_eq!(c.longest_stretch, 10_000);
    // Polling again after Ready is fused: Pending, not a second digest.
    assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
}

#[test]
fn poll_time_budget_uses_the_injected_clock() {
    // Clock: +1 ns per reading. Budget 3 ns: new_poll reads once, then each check reads once,
    // so each poll allows 2 checks (3 intervals) before returning Pending.
    let t = std::cell::Cell::new(0u64);
    let clock = scalrand_simd_chunk::FnClock(move || {
        t.set(t.get() + 1);
        std::time::Duration::from_nanos(t.get())
    });
    let data = vec![1u8; 9 * 100];
    let fut = Hashing::<Sha256, _>::new(
        &data,
        Policy::new(100).unwrap(),
        PollTimeBudget::new(clock, 3).unwrap(),
    );
    let (out, polls, _) = block_on_counting(fut);
    assert_eq!(out, Sha256::digest(&data));
    assert_eq!(polls, 3);
}

#[test]
fn bad_async_budgets() {
    assert!(PollBudget::new(0).is_err());
    assert!(PollTimeBudget::new(scalrand_simd_chunk::NoClock, 0).is_err());
}

/// A stream over owned chunks that is sometimes not ready.
struct Chunks {
    items: Vec<Vec<u8>>,
    next: usize,
    flip: bool,
}

impl futures_core::Stream for Chunks {
    type Item = Vec<u8>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        self.flip = !self.flip;
        if self.flip {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let i = self.next;
        self.next += 1;
        Poll::Ready(self.items.get(i).cloned())
    }
}

#[test]
fn digest_stream_equals_one_shot() {
    let sizes = [0usize, 1, 5000, 4096, 200_000, 3, 0, 70_000];
    let items: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| vec![k as u8; n])
        .collect();
    let all: Vec<u8> = items.concat();
    let stream = Chunks {
        items,
        next: 0,
        flip: false,
    };
    let fut = digest_stream::<Sha256, _, _, _>(
        stream,
        Policy::for_digest::<Sha256>(),
        PollBudget::default(),
    );
    let (out, polls, _) = block_on_counting(fut);
    assert_eq!(out, Sha256::digest(&all));
    assert!(polls > sizes.len());
}

/// An `AsyncRead` over a slice that returns at most 3000 bytes per read, and is interrupted or
/// not ready now and then; optionally fails at the end.
struct Flaky<'a> {
    data: &'a [u8],
    calls: usize,
    fail_at_end: bool,
}

impl futures_io::AsyncRead for Flaky<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.calls += 1;
        match self.calls % 5 {
            1 => return Poll::Ready(Err(io::ErrorKind::Interrupted.into())),
            3 => {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            _ => {}
        }
        if self.data.is_empty() && self.fail_at_end {
            return Poll::Ready(Err(io::Error::other("disk on fire")));
        }
        let n = buf.len().min(self.data.len()).min(3000);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Poll::Ready(Ok(n))
    }
}

#[test]
fn digest_reader_equals_one_shot_and_reports_errors() {
    let data: Vec<u8> = (0..123_457u32).map(|i| (i % 253) as u8).collect();
    let r = Flaky {
        data: &data,
        calls: 0,
        fail_at_end: false,
    };
    let (out, _, _) = block_on_counting(digest_reader::<Sha256, _, _>(
        r,
        Policy::new(4096).unwrap(),
        PollBudget::default(),
    ));
    assert_eq!(out.unwrap(), Sha256::digest(&data));

    let r = Flaky {
        data: &data,
        calls: 0,
        fail_at_end: true,
    };
    let (out, _, _) = block_on_counting(digest_reader::<Sha256, _, _>(
        r,
        Policy::new(4096).unwrap(),
        PollBudget::default(),
    ));
    assert_eq!(out.unwrap_err().to_string(), "disk on fire");
}

#[test]
fn custom_async_preempt_through_mut_ref() {
    struct EveryOther(bool);
    impl AsyncPreempt for EveryOther {
        fn poll_yield(&mut self, cx: &mut Context<'_>, _: scalrand_simd_chunk::Work) -> Poll<()> {
            self.0 = !self.0;
            if self.0 {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        }
    }
    let data = vec![0u8; 10 * 64];
    let mut p = EveryOther(false);
    let fut = Hashing::<Sha256, _>::new(&data, Policy::new(64).unwrap(), &mut p);
    let (out, polls, _) = block_on_counting(fut);
    assert_eq!(out, Sha256::digest(&data));
    // 9 checks, every other one says Pending: 5 Pendings, 6 polls.
    assert_eq!(polls, 6);
}

#[cfg(feature = "tokio")]
mod on_tokio {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use super::*;
    use scalrand_simd_chunk::{TokioCoop, digest_tokio};

    /// Counts how often the inner future is polled.
    struct CountPolls<F> {
        inner: F,
        polls: usize,
    }

    impl<F: Future + Unpin> Future for CountPolls<F> {
        type Output = (F::Output, usize);
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            self.polls += 1;
            let polls = self.polls;
            Pin::new(&mut self.inner).poll(cx).map(|o| (o, polls))
        }
    }

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn tokio_coop_yields_when_the_task_budget_is_spent() {
        let data = vec![2u8; 4 << 20];
        let rt = current_thread();
        let (out, polls) = rt.block_on(async {
            let d = Arc::new(data.clone());
            tokio::spawn(async move {
                CountPolls {
                    inner: digest_tokio::<Sha256>(&d),
                    polls: 0,
                }
                .await
            })
            .await
            .unwrap()
        });
        assert_eq!(out, Sha256::digest(&data));
        // 1024 intervals of 4 KiB, 128 budget units per poll.
        assert!(polls >= 8, "polls {polls}");
    }

    #[test]
    fn tokio_coop_respects_unconstrained() {
        let data = vec![2u8; 4 << 20];
        let rt = current_thread();
        let (out, polls) = rt.block_on(async {
            let fut = CountPolls {
                inner: Hashing::<Sha256, _>::new(&data, Policy::new(4096).unwrap(), TokioCoop),
                polls: 0,
            };
            tokio::task::coop::unconstrained(fut).await
        });
        assert_eq!(out, Sha256::digest(&data));
        assert_eq!(polls, 1);
    }

    /// Runs `hash` inside a current-thread runtime next to a 1 ms ticker and returns (ticks seen
    /// while hashing, gaps between consecutive ticks or hash start/end in ms, hash duration).
    fn ticks_while<F, Fut>(hash: F) -> (usize, Vec<f64>, Duration)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ()>,
    {
        let rt = current_thread();
        rt.block_on(async {
            let ticks = Arc::new(Mutex::new(Vec::<Instant>::new()));
            let t2 = ticks.clone();
            let ticker = tokio::spawn(async move {
                let mut iv = tokio::time::interval(Duration::from_millis(1));
                iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    iv.tick().await;
                    t2.lock().unwrap().push(Instant::now());
                }
            });
            tokio::time::sleep(Duration::from_millis(10)).await;
            let start = Instant::now();
            hash().await;
            let end = Instant::now();
            ticker.abort();
            let ticks = ticks.lock().unwrap();
            let mut marks = vec![start];
            marks.extend(ticks.iter().copied().filter(|&t| t >= start && t <= end));
            marks.push(end);
            let gaps = marks
                .windows(2)
                .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
                .collect();
            (marks.len() - 2, gaps, end - start)
        })
    }

    fn p99(gaps: &[f64]) -> f64 {
        let mut g = gaps.to_vec();
        g.sort_by(f64::total_cmp);
        g[((g.len() as f64 * 0.99).ceil() as usize)
            .saturating_sub(1)
            .min(g.len() - 1)]
    }

    /// The crate's acceptance test: 256 MiB hashed with `digest_async` on a current-thread
    /// runtime while a 1 ms ticker keeps ticking; the same hash done with a plain
    /// `Sha256::digest` in the same future starves the ticker completely. (sha2 is built with
    /// opt-level 3 even in debug, see the root Cargo.toml, so this takes well under a second.)
    #[test]
    fn ticker_keeps_ticking_while_hashing_256_mib() {
        let data: Arc<Vec<u8>> = Arc::new(vec![0x5a; 256 << 20]);

        let d = data.clone();
        let (ticks, gaps, took) = ticks_while(move || async move {
            let out = digest_async::<Sha256>(&d).await;
            std::hint::black_box(out);
        });
        let max_gap = gaps.iter().copied().fold(0.0, f64::max);
        eprintln!(
            "digest_async: {took:?}, {ticks} ticks, p99 gap {:.3} ms, max gap {max_gap:.3} ms",
            p99(&gaps)
        );
        let took_ms = took.as_secs_f64() * 1e3;
        // Ideal is one tick per ms; demand a tenth of that so a loaded 2-core box cannot flake,
        // and no gap longer than 250 ms (the one-shot hash takes the whole run as one gap).
        assert!(
            ticks as f64 >= (took_ms / 10.0).floor(),
            "only {ticks} ticks in {took_ms:.1} ms"
        );
        assert!(ticks >= 5, "only {ticks} ticks in {took_ms:.1} ms");
        assert!(max_gap < 250.0, "gap of {max_gap:.1} ms");

        let d = data.clone();
        let (ticks, gaps, took) = ticks_while(move || async move {
            let out = Sha256::digest(&d[..]);
            std::hint::black_box(out);
        });
        eprintln!("Sha256::digest: {took:?}, {ticks} ticks, gaps {gaps:?} ms");
        // A blocking poll cannot let the ticker run at all.
        assert_eq!(ticks, 0);
        assert_eq!(gaps.len(), 1);
    }
}

/// Violates the `AsyncRead` contract: claims more bytes than the buffer holds.
struct Liar;

impl futures_io::AsyncRead for Liar {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len() + 1))
    }
}

#[test]
fn lying_reader_is_an_invalid_data_error() {
    let (out, _, _) = block_on_counting(digest_reader::<Sha256, _, _>(
        Liar,
        Policy::new(64).unwrap(),
        PollBudget::default(),
    ));
    assert_eq!(out.unwrap_err().kind(), io::ErrorKind::InvalidData);
}

#[test]
fn debug_never_prints_the_data() {
    let secret = b"correct horse battery staple";
    let fut = digest_async::<Sha256>(secret);
    let s = format!("{fut:?}");
    assert!(s.contains("remaining: 28"), "{s}");
    assert!(!s.contains("99, 111, 114"), "{s}"); // "cor" as bytes
}
