//! The async form of the driver (feature `async`): futures that hash a slice, a `Stream` of
//! chunks or an `AsyncRead` in check intervals and return `Pending` when an [`AsyncPreempt`]
//! says so. No runtime dependency: the default policy yields with `wake_by_ref` + `Pending`,
//! which every executor understands.
//!
//! The kernel thread this crate follows (LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022) is about kernel FPU sections; the same disease in async Rust is a
//! large hash inside a future blocking its executor thread. Here the "section" is the poll:
//! a per-poll budget plays the role of `need_resched()`, and returning `Pending` is the
//! `cond_resched()`.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use digest::common::BlockSizeUser;
use digest::{Digest, Output};

use crate::{Clock, Counters, Policy, PolicyError, Work};

/// The async `Preempt`: asked between check intervals whether the future may continue in this
/// poll.
///
/// # Contract for implementers
/// - Return `Poll::Ready(())` to go on hashing in this poll.
/// - Return `Poll::Pending` to end the poll; **before** doing so, arrange for the task to be
///   woken (`cx.waker().wake_by_ref()`, or a runtime's deferred wake), or it will hang.
/// - [`new_poll`](AsyncPreempt::new_poll) is called at the start of every poll of the future,
///   so per-poll budgets can reset even when a poll ended for another reason (I/O not ready).
pub trait AsyncPreempt {
    /// A new poll of the future begins.
    fn new_poll(&mut self) {}
    /// May the future go on in this poll, after `work` since the last check?
    fn poll_yield(&mut self, cx: &mut Context<'_>, work: Work) -> Poll<()>;
}

impl<P: AsyncPreempt + ?Sized> AsyncPreempt for &mut P {
    fn new_poll(&mut self) {
        (**self).new_poll();
    }

    fn poll_yield(&mut self, cx: &mut Context<'_>, work: Work) -> Poll<()> {
        (**self).poll_yield(cx, work)
    }
}

/// Bytes one poll may hash under [`PollBudget::default`]: 64 KiB, about 30 µs of SHA-256 with
/// SHA-NI and 150 µs without; inside the usual "10 to 100 µs between awaits" advice on fast
/// machines. Use [`PollTimeBudget`] for a latency that does not depend on the algorithm.
pub const DEFAULT_POLL_BYTES: usize = 64 * 1024;

/// Runtime-agnostic per-poll byte budget: once a poll has hashed `per_poll` bytes it calls
/// `wake_by_ref` and returns `Pending`, so the executor can run other tasks first.
#[derive(Debug, Clone)]
pub struct PollBudget {
    per_poll: usize,
    used: usize,
}

impl PollBudget {
    /// At most about `per_poll` bytes per poll (rounded up to whole check intervals; every poll
    /// hashes at least one interval, so the future always makes progress).
    pub const fn new(per_poll: usize) -> Result<Self, PolicyError> {
        if per_poll == 0 {
            return Err(PolicyError::ZeroTarget);
        }
        Ok(PollBudget { per_poll, used: 0 })
    }
}

impl Default for PollBudget {
    fn default() -> Self {
        PollBudget {
            per_poll: DEFAULT_POLL_BYTES,
            used: 0,
        }
    }
}

impl AsyncPreempt for PollBudget {
    fn new_poll(&mut self) {
        self.used = 0;
    }

    fn poll_yield(&mut self, cx: &mut Context<'_>, work: Work) -> Poll<()> {
        self.used = self.used.saturating_add(work.bytes);
        if self.used >= self.per_poll {
            self.used = 0;
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Runtime-agnostic per-poll time budget: a poll ends (`wake_by_ref` + `Pending`) at the
/// first check after `budget_ns` have passed since it began, timed by an injectable [`Clock`].
#[derive(Debug, Clone)]
pub struct PollTimeBudget<C> {
    clock: C,
    budget_ns: u64,
    poll_start: u64,
}

impl<C: Clock> PollTimeBudget<C> {
    /// Ends each poll after about `budget_ns` nanoseconds.
    pub fn new(clock: C, budget_ns: u64) -> Result<Self, PolicyError> {
        if budget_ns == 0 {
            return Err(PolicyError::ZeroTarget);
        }
        let poll_start = crate::preempt::now_ns(&clock);
        Ok(PollTimeBudget {
            clock,
            budget_ns,
            poll_start,
        })
    }
}

impl<C: Clock> AsyncPreempt for PollTimeBudget<C> {
    fn new_poll(&mut self) {
        self.poll_start = crate::preempt::now_ns(&self.clock);
    }

    fn poll_yield(&mut self, cx: &mut Context<'_>, _work: Work) -> Poll<()> {
        if crate::preempt::now_ns(&self.clock).saturating_sub(self.poll_start) >= self.budget_ns {
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Position within the check interval plus counters: shared by the async futures.
#[derive(Debug, Clone)]
struct AsyncEngine {
    policy: Policy,
    since_check: usize,
    stretch: u64,
    counters: Counters,
}

impl AsyncEngine {
    fn new(policy: Policy) -> Self {
        AsyncEngine {
            policy,
            since_check: 0,
            stretch: 0,
            counters: Counters::default(),
        }
    }

    fn start_poll(&mut self) {
        self.stretch = 0;
    }

    /// How many of the `avail` bytes may be processed now, or `Pending` if the check that is
    /// due says to yield (the waker has been arranged by `preempt`).
    fn next<P: AsyncPreempt>(
        &mut self,
        cx: &mut Context<'_>,
        preempt: &mut P,
        avail: usize,
    ) -> Poll<usize> {
        let interval = self.policy.interval();
        if self.since_check >= interval {
            self.since_check = 0;
            self.counters.checks += 1;
            let work = Work::new(interval, self.policy.block_size());
            if preempt.poll_yield(cx, work).is_pending() {
                self.counters.yields += 1;
                return Poll::Pending;
            }
        }
        Poll::Ready((interval - self.since_check).min(avail))
    }

    fn done(&mut self, n: usize) {
        self.since_check += n;
        self.stretch += n as u64;
        self.counters.bytes += n as u64;
        self.counters.note_stretch(self.stretch);
    }
}

/// Future returned by [`digest_async`]: hashes a slice, at most a per-poll budget at a time.
///
/// Polling it again after it returned `Ready` returns `Pending` without waking (as
/// `futures::future::Fuse` does), never a second, wrong digest.
#[must_use = "futures do nothing unless polled"]
pub struct Hashing<'a, D, P = PollBudget> {
    hasher: D,
    data: &'a [u8],
    preempt: P,
    engine: AsyncEngine,
    finished: bool,
}

/// Shows progress only: never the data (it may be secret) nor the hasher's state.
impl<D, P> core::fmt::Debug for Hashing<'_, D, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hashing")
            .field("remaining", &self.data.len())
            .field("engine", &self.engine)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl<'a, D: Digest, P: AsyncPreempt> Hashing<'a, D, P> {
    /// Hashes `data` with an explicit check-interval policy and async preemption policy.
    pub fn new(data: &'a [u8], policy: Policy, preempt: P) -> Self {
        Hashing {
            hasher: D::new(),
            data,
            preempt,
            engine: AsyncEngine::new(policy),
            finished: false,
        }
    }

    /// What the future did so far (`yields` counts the `Pending` returns it chose).
    pub fn counters(&self) -> &Counters {
        &self.engine.counters
    }
}

impl<D: Digest + Unpin, P: AsyncPreempt + Unpin> Future for Hashing<'_, D, P> {
    type Output = Output<D>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output<D>> {
        let this = self.get_mut();
        if this.finished {
            return Poll::Pending;
        }
        this.preempt.new_poll();
        this.engine.start_poll();
        while !this.data.is_empty() {
            let take = match this.engine.next(cx, &mut this.preempt, this.data.len()) {
                Poll::Ready(n) => n,
                Poll::Pending => return Poll::Pending,
            };
            let (now, rest) = this.data.split_at(take);
            Digest::update(&mut this.hasher, now);
            this.data = rest;
            this.engine.done(take);
        }
        this.finished = true;
        Poll::Ready(core::mem::replace(&mut this.hasher, D::new()).finalize())
    }
}

/// A future that hashes `data` with `D`'s default check interval ([`Policy::for_digest`]) and
/// the runtime-agnostic [`PollBudget`] (64 KiB per poll, then `wake_by_ref` + `Pending`).
/// Resolves to exactly `D::digest(data)`.
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub fn digest_async<D: Digest + BlockSizeUser>(data: &[u8]) -> Hashing<'_, D, PollBudget> {
    Hashing::new(data, Policy::for_digest::<D>(), PollBudget::default())
}

/// Future returned by [`digest_stream`]: hashes a `Stream` of byte chunks.
#[must_use = "futures do nothing unless polled"]
pub struct HashStream<St, B, D, P> {
    stream: St,
    current: Option<B>,
    offset: usize,
    hasher: D,
    preempt: P,
    engine: AsyncEngine,
    finished: bool,
}

/// Shows progress only: never the data nor the hasher's state.
impl<St, B, D, P> core::fmt::Debug for HashStream<St, B, D, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HashStream")
            .field("engine", &self.engine)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl<St, B, D: Digest, P> HashStream<St, B, D, P> {
    /// What the future did so far.
    pub fn counters(&self) -> &Counters {
        &self.engine.counters
    }
}

/// Hashes every item of `stream` in order, in check intervals counted across items; large
/// items are spread over several polls. Resolves to the digest of the concatenated items.
/// Polled after `Ready`, it returns `Pending` without waking.
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub fn digest_stream<D, St, B, P>(stream: St, policy: Policy, preempt: P) -> HashStream<St, B, D, P>
where
    D: Digest,
    St: futures_core::Stream<Item = B>,
    B: AsRef<[u8]>,
    P: AsyncPreempt,
{
    HashStream {
        stream,
        current: None,
        offset: 0,
        hasher: D::new(),
        preempt,
        engine: AsyncEngine::new(policy),
        finished: false,
    }
}

impl<St, B, D, P> Future for HashStream<St, B, D, P>
where
    D: Digest + Unpin,
    St: futures_core::Stream<Item = B> + Unpin,
    B: AsRef<[u8]> + Unpin,
    P: AsyncPreempt + Unpin,
{
    type Output = Output<D>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output<D>> {
        let this = self.get_mut();
        if this.finished {
            return Poll::Pending;
        }
        this.preempt.new_poll();
        this.engine.start_poll();
        loop {
            let Some(item) = this.current.as_ref() else {
                match Pin::new(&mut this.stream).poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(item)) => {
                        this.current = Some(item);
                        this.offset = 0;
                        continue;
                    }
                    Poll::Ready(None) => {
                        this.finished = true;
                        return Poll::Ready(
                            core::mem::replace(&mut this.hasher, D::new()).finalize(),
                        );
                    }
                }
            };
            let bytes = item.as_ref().get(this.offset..).unwrap_or(&[]);
            if bytes.is_empty() {
                this.current = None;
                continue;
            }
            let take = match this.engine.next(cx, &mut this.preempt, bytes.len()) {
                Poll::Ready(n) => n,
                Poll::Pending => return Poll::Pending,
            };
            Digest::update(&mut this.hasher, &bytes[..take]);
            this.offset += take;
            this.engine.done(take);
        }
    }
}

#[cfg(feature = "std")]
pub use reader::{HashReader, digest_reader};

#[cfg(feature = "std")]
mod reader {
    use std::io;
    use std::vec::Vec;

    use super::*;

    /// Future returned by [`digest_reader`]: hashes an `AsyncRead` to its end.
    #[must_use = "futures do nothing unless polled"]
    pub struct HashReader<R, D, P> {
        reader: R,
        buf: Vec<u8>,
        start: usize,
        end: usize,
        hasher: D,
        preempt: P,
        engine: AsyncEngine,
        finished: bool,
    }

    /// Shows progress only: never the buffered data nor the hasher's state.
    impl<R, D, P> core::fmt::Debug for HashReader<R, D, P> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("HashReader")
                .field("engine", &self.engine)
                .field("finished", &self.finished)
                .finish_non_exhaustive()
        }
    }

    impl<R, D: Digest, P> HashReader<R, D, P> {
        /// What the future did so far.
        pub fn counters(&self) -> &Counters {
            &self.engine.counters
        }
    }

    /// Reads `reader` to its end through a buffer of one check interval and hashes what it
    /// reads, yielding by `preempt` between intervals. Resolves to the digest, or to the first
    /// read error other than [`io::ErrorKind::Interrupted`] (which is retried), or to an
    /// [`io::ErrorKind::InvalidData`] error if the reader claims to have read more bytes than
    /// the buffer holds. Polled after
    /// `Ready`, it returns `Pending` without waking.
    #[cfg_attr(docsrs, doc(cfg(all(feature = "async", feature = "std"))))]
    pub fn digest_reader<D, R, P>(reader: R, policy: Policy, preempt: P) -> HashReader<R, D, P>
    where
        D: Digest,
        R: futures_io::AsyncRead,
        P: AsyncPreempt,
    {
        HashReader {
            reader,
            buf: std::vec![0; policy.interval()],
            start: 0,
            end: 0,
            hasher: D::new(),
            preempt,
            engine: AsyncEngine::new(policy),
            finished: false,
        }
    }

    impl<R, D, P> Future for HashReader<R, D, P>
    where
        D: Digest + Unpin,
        R: futures_io::AsyncRead + Unpin,
        P: AsyncPreempt + Unpin,
    {
        type Output = io::Result<Output<D>>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let this = self.get_mut();
            if this.finished {
                return Poll::Pending;
            }
            this.preempt.new_poll();
            this.engine.start_poll();
            loop {
                if this.start == this.end {
                    match Pin::new(&mut this.reader).poll_read(cx, &mut this.buf) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Poll::Ready(Err(e)) => {
                            this.finished = true;
                            return Poll::Ready(Err(e));
                        }
                        Poll::Ready(Ok(0)) => {
                            this.finished = true;
                            let h = core::mem::replace(&mut this.hasher, D::new());
                            return Poll::Ready(Ok(h.finalize()));
                        }
                        Poll::Ready(Ok(n)) if n > this.buf.len() => {
                            // A reader claiming more than the buffer holds breaks the
                            // `AsyncRead` contract; the extra bytes were never written to us.
                            this.finished = true;
                            return Poll::Ready(Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                "AsyncRead returned more bytes than the buffer holds",
                            )));
                        }
                        Poll::Ready(Ok(n)) => {
                            this.start = 0;
                            this.end = n;
                        }
                    }
                }
                let take = match this
                    .engine
                    .next(cx, &mut this.preempt, this.end - this.start)
                {
                    Poll::Ready(n) => n,
                    Poll::Pending => return Poll::Pending,
                };
                Digest::update(&mut this.hasher, &this.buf[this.start..this.start + take]);
                this.start += take;
                this.engine.done(take);
            }
        }
    }
}
