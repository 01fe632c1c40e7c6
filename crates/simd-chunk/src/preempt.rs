//! The preemption half of the trait pair: `need_resched()` / `cond_resched()` in the kernel
//! (LKML, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", Robert Elliott,
//! December 2022), and the policies shipped with the crate.
//!
//! A [`Preempt`] answers one cheap question at every check interval ("should I yield now?")
//! and performs the yield when the answer is yes. Deciding and yielding are separate so that a
//! policy (a flag, a time budget) can be combined with any way of yielding ([`YieldNow`]:
//! `std::thread::yield_now`, a spin hint, `cond_resched`, a closure).

use scalrand_os::Clock;
use scalrand_os::primitive::{AtomicBool, Ordering};

/// `clock`'s reading in nanoseconds, saturating after 584 years.
#[inline]
pub(crate) fn now_ns<C: Clock>(clock: &C) -> u64 {
    u64::try_from(clock.now().as_nanos()).unwrap_or(u64::MAX)
}

/// What was done since the previous check: handed to [`Preempt::should_yield`].
///
/// With the synchronous driver every check comes exactly one check interval after the previous
/// one (or after the start of the stream), so `bytes` is the policy's interval.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Bytes processed since the previous check.
    pub bytes: usize,
    /// Whole blocks of the algorithm's block size among those bytes.
    pub blocks: usize,
}

impl Work {
    /// `bytes` bytes of an algorithm with `block_size`-byte blocks (`block_size` 0 counts 0 blocks).
    #[inline]
    pub const fn new(bytes: usize, block_size: usize) -> Self {
        let blocks = match bytes.checked_div(block_size) {
            Some(b) => b,
            None => 0,
        };
        Work { bytes, blocks }
    }
}

/// Decides, at each check interval, whether to give up the CPU, and gives it up.
///
/// # Contract for implementers
/// - [`should_yield`](Preempt::should_yield) is called once per check interval and must be
///   cheap (a flag load, a clock read): it is the `need_resched()` of the seed.
/// - [`yield_now`](Preempt::yield_now) is called **only** right after `should_yield` returned
///   `true`, outside any [`SimdSection`](crate::SimdSection), and may block or reschedule.
/// - Answers may be arbitrary: the driver's output never depends on them, only the counters
///   and the latency do.
pub trait Preempt {
    /// `need_resched()`: should the caller yield now, given `work` done since the last check?
    fn should_yield(&mut self, work: Work) -> bool;
    /// `cond_resched()`: yield. Called only after `should_yield` returned `true`.
    fn yield_now(&mut self);
}

impl<P: Preempt + ?Sized> Preempt for &mut P {
    #[inline]
    fn should_yield(&mut self, work: Work) -> bool {
        (**self).should_yield(work)
    }

    #[inline]
    fn yield_now(&mut self) {
        (**self).yield_now();
    }
}

/// Never yields: chunking without preemption (`CONFIG_PREEMPT_NONE` with no watchdog).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NeverYield;

impl Preempt for NeverYield {
    #[inline(always)]
    fn should_yield(&mut self, _work: Work) -> bool {
        false
    }

    #[inline(always)]
    fn yield_now(&mut self) {}
}

/// How to give up the CPU once a policy decided to.
pub trait YieldNow {
    /// Gives up the CPU (or does whatever the environment calls yielding).
    fn yield_now(&mut self);
}

impl<F: FnMut()> YieldNow for F {
    #[inline]
    fn yield_now(&mut self) {
        self();
    }
}

/// Yields with `core::hint::spin_loop()`: for no_std callers whose real yield happens
/// elsewhere (the section end itself lets an interrupt in), and for tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SpinYield;

impl YieldNow for SpinYield {
    #[inline]
    fn yield_now(&mut self) {
        core::hint::spin_loop();
    }
}

/// Yields with [`std::thread::yield_now`] (`sched_yield(2)` on Linux).
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ThreadYield;

#[cfg(feature = "std")]
impl YieldNow for ThreadYield {
    #[inline]
    fn yield_now(&mut self) {
        std::thread::yield_now();
    }
}

/// Yields when another thread (a scheduler, a watchdog, an interrupt handler) has set a flag:
/// the kernel's `need_resched()` as an [`AtomicBool`].
///
/// `should_yield` is one relaxed load. `yield_now` clears the flag *before* yielding, so a
/// request raised while the yield runs is seen at the next check instead of being lost. The
/// flag carries no data, so `Relaxed` is enough: a request is noticed at the next check after
/// the store becomes visible.
#[derive(Debug)]
pub struct FlagPreempt<'a, Y> {
    flag: &'a AtomicBool,
    then: Y,
}

impl<'a, Y: YieldNow> FlagPreempt<'a, Y> {
    /// Yields with `then` whenever `flag` is found set.
    pub const fn new(flag: &'a AtomicBool, then: Y) -> Self {
        FlagPreempt { flag, then }
    }
}

impl<Y: YieldNow> Preempt for FlagPreempt<'_, Y> {
    #[inline]
    fn should_yield(&mut self, _work: Work) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    fn yield_now(&mut self) {
        self.flag.store(false, Ordering::Relaxed);
        self.then.yield_now();
    }
}

/// Yields once `budget_ns` nanoseconds have passed since the last yield (or since
/// construction): a time slice measured with an injectable [`Clock`].
///
/// Every check reads the clock once. Pair it with a check interval short enough that one
/// interval takes a fraction of the budget ([`Policy::for_latency`](crate::Policy::for_latency)
/// computes one from a measured ns/byte); the longest stretch between yields is then about
/// `budget_ns` plus one interval.
#[derive(Debug)]
pub struct TimeBudget<C, Y> {
    clock: C,
    then: Y,
    budget_ns: u64,
    stretch_start: u64,
}

impl<C: Clock, Y: YieldNow> TimeBudget<C, Y> {
    /// Yields with `then` after every `budget_ns` of work, timed by `clock`. A budget of 0
    /// yields at every check.
    pub fn new(clock: C, budget_ns: u64, then: Y) -> Self {
        let stretch_start = now_ns(&clock);
        TimeBudget {
            clock,
            then,
            budget_ns,
            stretch_start,
        }
    }

    /// Starts a new stretch now, e.g. after the caller yielded by other means.
    pub fn restart(&mut self) {
        self.stretch_start = now_ns(&self.clock);
    }

    /// The budget in nanoseconds.
    pub const fn budget_ns(&self) -> u64 {
        self.budget_ns
    }
}

#[cfg(feature = "std")]
impl TimeBudget<scalrand_os::MonotonicClock, ThreadYield> {
    /// `std::thread::yield_now` after every `budget` of work, timed by [`std::time::Instant`].
    /// Budgets beyond `u64::MAX` ns (584 years) saturate.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn std(budget: core::time::Duration) -> Self {
        let ns = u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX);
        TimeBudget::new(scalrand_os::MonotonicClock::new(), ns, ThreadYield)
    }
}

impl<C: Clock, Y: YieldNow> Preempt for TimeBudget<C, Y> {
    #[inline]
    fn should_yield(&mut self, _work: Work) -> bool {
        now_ns(&self.clock).saturating_sub(self.stretch_start) >= self.budget_ns
    }

    fn yield_now(&mut self) {
        self.then.yield_now();
        self.stretch_start = now_ns(&self.clock);
    }
}
