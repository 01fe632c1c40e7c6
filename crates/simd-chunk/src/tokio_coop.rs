//! Tokio's cooperative budget as an [`AsyncPreempt`] (feature `tokio`).
//!
//! Tokio gives each task a budget of operations per poll (128 in tokio 1.x); its own resources
//! consume one unit per operation and return `Pending` once it is spent, with the waker
//! deferred until the scheduler has looked at other work. [`TokioCoop`] consumes one unit per
//! check interval through the public `tokio::task::coop::poll_proceed` (tokio ≥ 1.47), so a
//! hashing future shares the budget with the task's other tokio operations, stops when the
//! task's budget is spent, shows up in tokio's forced-yield metric, and runs to completion in
//! one poll under `tokio::task::coop::unconstrained` or outside a runtime.
//!
//! Follows the idea of LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022 that the environment, not the algorithm, decides when
//! to yield: here the environment is tokio's scheduler.

use core::task::{Context, Poll};

use digest::Digest;
use digest::common::BlockSizeUser;

use crate::{AsyncPreempt, Hashing, Policy, Work};

/// One unit of tokio's per-task coop budget per check interval; `Pending` (with tokio's
/// deferred wake) once the budget is spent.
///
/// With the default 4 KiB interval, a full budget of 128 units lets one poll hash 512 KiB;
/// use a shorter [`Policy`] for a tighter bound.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioCoop;

impl AsyncPreempt for TokioCoop {
    fn poll_yield(&mut self, cx: &mut Context<'_>, _work: Work) -> Poll<()> {
        match tokio::task::coop::poll_proceed(cx) {
            Poll::Ready(restore) => {
                // The interval was hashed: the unit is really spent.
                restore.made_progress();
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// [`digest_async`](crate::digest_async) under tokio's coop budget instead of a byte budget.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub fn digest_tokio<D: Digest + BlockSizeUser>(data: &[u8]) -> Hashing<'_, D, TokioCoop> {
    Hashing::new(data, Policy::for_digest::<D>(), TokioCoop)
}
