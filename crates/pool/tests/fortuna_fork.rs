//! Fork safety with real forks: a child never returns bytes its parent also returns, however
//! it was forked and whoever reads first, its memory holds nothing that regenerates the
//! parent's output, and it does not hang on a lock a parent's thread held.
//!
//! The orderings covered: (1) another library's `pthread_atfork` child handler, registered
//! before scalrand's first use, draws from the Fortuna in the child; (2) a raw
//! `syscall(SYS_fork)`, which runs no atfork handler; (3) a child that never reads still must
//! not carry the parent's key; (4) a fork while another thread holds the generator lock; (5) a
//! signal handler that reads before anything else in a raw-fork child.
//! Children report through a pipe and leave with `_exit`; each arms an alarm so a hang
//! kills it (and fails the test) instead of the test run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![cfg(all(feature = "fortuna", unix, feature = "std", not(miri)))]

use core::time::Duration;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aes::Aes256Dec;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherDecrypt, KeyInit};
use scalrand_pool::fortuna::{ChaCha20Prf, Fortuna, ReadMode};
#[cfg(target_os = "linux")]
use scalrand_testkit::fork::raw_fork;
use scalrand_testkit::fork::{ForkFn, in_child, libc_fork};

const N: usize = 64;

fn zero() -> Duration {
    Duration::ZERO
}

fn read(fill: &dyn Fn(&mut [u8])) -> Vec<u8> {
    let mut b = vec![0u8; N];
    fill(&mut b);
    b
}

// ---- (1) another library's atfork child handler, registered first -------------------

/// The Fortuna the early handler draws from (one per mode; set by the test).
static EARLY_AES: [std::sync::OnceLock<Fortuna>; 2] =
    [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
/// Which of them the handler uses, and the thread that forks (only children of that thread's
/// forks draw, so other tests' forks are left alone).
static EARLY_MODE: AtomicUsize = AtomicUsize::new(0);
static EARLY_ARMED: AtomicBool = AtomicBool::new(false);
static EARLY_THREAD: AtomicUsize = AtomicUsize::new(0);
/// What the handler drew in the child, and whether it drew (the child sends them back).
static mut EARLY_DRAW: [u8; N] = [0; N];
static EARLY_DREW: AtomicBool = AtomicBool::new(false);

extern "C" fn early_child_handler() {
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() } as usize;
    if !EARLY_ARMED.load(Ordering::Acquire) || EARLY_THREAD.load(Ordering::Acquire) != me {
        return;
    }
    if let Some(f) = EARLY_AES[EARLY_MODE.load(Ordering::Acquire)].get() {
        // SAFETY: the child is single-threaded while atfork handlers run, so this handler is
        // `EARLY_DRAW`'s one writer there (the parent never writes it).
        f.fill_bytes(unsafe { &mut *std::ptr::addr_of_mut!(EARLY_DRAW) });
        EARLY_DREW.store(true, Ordering::Release);
    }
}

static REGISTER: Once = Once::new();

/// Every test in this file calls this first, so the handler is registered before this
/// process uses scalrand at all: it runs before anything scalrand could register.
fn register_early_handler() {
    REGISTER.call_once(|| {
        // SAFETY: a valid extern "C" handler with no captured state.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(early_child_handler)) };
        assert_eq!(rc, 0);
    });
}

#[test]
fn an_earlier_atfork_child_handler_draws_fresh_bytes() {
    register_early_handler();
    for (i, mode) in [ReadMode::Locked, ReadMode::Concurrent]
        .into_iter()
        .enumerate()
    {
        let f = EARLY_AES[i].get_or_init(|| Fortuna::new(mode).unwrap());
        let mut before = [0u8; N];
        f.fill_bytes(&mut before); // the parent has used it before forking
        EARLY_MODE.store(i, Ordering::Release);
        // SAFETY: pthread_self has no preconditions.
        EARLY_THREAD.store(unsafe { libc::pthread_self() } as usize, Ordering::Release);
        EARLY_ARMED.store(true, Ordering::Release);
        // The child only sends back what the handler drew there (nothing if it did not).
        let ((), child) = in_child(
            libc_fork,
            || {
                if EARLY_DREW.load(Ordering::Acquire) {
                    // SAFETY: the handler has run and the child is single-threaded: no writer.
                    unsafe { &*std::ptr::addr_of!(EARLY_DRAW) }.as_slice()
                } else {
                    &[]
                }
            },
            || EARLY_ARMED.store(false, Ordering::Release),
        );
        let child = child.expect("the child exited after its report");
        assert_eq!(child.len(), N, "the handler wrote nothing ({mode:?})");
        let mut parent = [0u8; N];
        f.fill_bytes(&mut parent);
        assert_ne!(
            child, parent,
            "{mode:?}: the early handler got the parent's next bytes"
        );
        assert_ne!(child, before);
    }
}

// ---- (2) raw SYS_fork, and libc fork -------------------------------------------------

fn child_differs_from_parent(how: ForkFn, fill: &dyn Fn(&mut [u8])) {
    let _ = read(fill); // the parent has used the state before forking
    // The child's buffer is allocated before the fork: after a raw `SYS_fork` glibc's malloc
    // may be locked by a thread the child does not have, so the child must not allocate.
    let in_child_read = |mut buf: Vec<u8>| {
        move || {
            fill(&mut buf);
            buf
        }
    };
    let (parent, child) = in_child(how, in_child_read(vec![0u8; N]), || read(fill));
    let child = child.expect("the child answered");
    // Without fork detection the child would have returned exactly the parent's next read.
    assert_ne!(child, parent, "child repeated the parent's bytes");
    // A second child differs from the first, and from the parent.
    let (parent2, child2) = in_child(how, in_child_read(vec![0u8; N]), || read(fill));
    let child2 = child2.expect("the child answered");
    assert_ne!(child2, child);
    assert_ne!(child2, parent2);
}

#[cfg(target_os = "linux")]
#[test]
fn raw_sys_fork_child_never_repeats_parent() {
    register_early_handler();
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::new(mode).unwrap();
        child_differs_from_parent(raw_fork, &|b| f.fill_bytes(b));
        let c = Fortuna::<ChaCha20Prf>::with_prf(mode).unwrap();
        child_differs_from_parent(raw_fork, &|b| c.fill_bytes(b));
    }
}

#[test]
fn libc_fork_child_never_repeats_parent() {
    register_early_handler();
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::new(mode).unwrap();
        child_differs_from_parent(libc_fork, &|b| f.fill_bytes(b));
        let c = Fortuna::<ChaCha20Prf>::with_prf(mode).unwrap();
        child_differs_from_parent(libc_fork, &|b| c.fill_bytes(b));
    }
}

// ---- (5) a signal handler that reads first in the child ------------------------------

static SIG_FORTUNA: std::sync::atomic::AtomicPtr<Fortuna> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static mut SIG_DRAW: [u8; N] = [0; N];

extern "C" fn draw_on_sigusr2(_: libc::c_int) {
    let f = SIG_FORTUNA.load(std::sync::atomic::Ordering::Acquire);
    if !f.is_null() {
        // SAFETY: non-null only while the test keeps the Fortuna alive; in the single-threaded
        // child this handler is `SIG_DRAW`'s one writer.
        unsafe { (*f).fill_bytes(&mut *std::ptr::addr_of_mut!(SIG_DRAW)) };
    }
}

/// The child's first read happens in a signal handler that the child raises as its very first
/// act after a raw `SYS_fork` (no atfork handler ever runs): detection that needs code of the
/// child to run before the read would hand the handler the parent's next bytes.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_handler_reading_first_in_a_raw_fork_child_gets_fresh_bytes() {
    // SAFETY: the handler only reads from a Fortuna the test keeps alive (see above); SIGUSR2
    // is sent only by this test's children, to themselves.
    let old = unsafe {
        libc::signal(
            libc::SIGUSR2,
            draw_on_sigusr2 as *const () as libc::sighandler_t,
        )
    };
    assert_ne!(old, libc::SIG_ERR);
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::new(mode).unwrap();
        let _ = read(&|b| f.fill_bytes(b));
        SIG_FORTUNA.store(
            std::ptr::from_ref(&f).cast_mut(),
            std::sync::atomic::Ordering::Release,
        );
        let mut buf = vec![0u8; N];
        let (parent, child) = in_child(
            raw_fork,
            move || {
                // SAFETY: a signal a process sends itself is delivered before kill(2) returns,
                // so the handler has filled `SIG_DRAW` when it is read; no allocation here.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGUSR2);
                    buf.copy_from_slice(&*std::ptr::addr_of!(SIG_DRAW));
                }
                buf
            },
            || read(&|b| f.fill_bytes(b)),
        );
        SIG_FORTUNA.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
        let child = child.expect("the child answered");
        assert_ne!(child, vec![0u8; N], "{mode:?}: the handler drew");
        assert_ne!(
            child, parent,
            "{mode:?}: a read from a signal handler in the child repeated the parent"
        );
    }
}

/// Control: absent a fork, equal state gives equal bytes (so the inequalities above are the
/// fork detection's doing), and a child does not disturb its parent.
#[test]
fn control_equal_state_equal_bytes() {
    register_early_handler();
    let a: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[5; 32], zero as fn() -> Duration).unwrap();
    let b: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[5; 32], zero as fn() -> Duration).unwrap();
    assert_eq!(read(&|x| a.fill_bytes(x)), read(&|x| b.fill_bytes(x)));
    let (_, child) = in_child(libc_fork, || read(&|x| a.fill_bytes(x)), || ());
    let x = read(&|x| a.fill_bytes(x));
    assert_eq!(
        x,
        read(&|y| b.fill_bytes(y)),
        "the parent is unaffected by its child"
    );
    assert_ne!(child.unwrap(), x);
}

// ---- (3) a child that never reads holds nothing of the parent's key -------------------

/// Reads `r` from this process's memory.
/// Appends the bytes of `r` to `out` (which has the capacity: no allocation).
fn dump_into(r: core::ops::Range<usize>, out: &mut Vec<u8>) {
    for a in r {
        // SAFETY: `memory_ranges_for_tests` returns the live `Fortuna` value and its state
        // allocation (a wipe-on-fork page, zero-filled by the kernel in a child, or a heap
        // block), both readable for the test's whole run; volatile byte reads of them.
        out.push(unsafe { core::ptr::read_volatile(a as *const u8) });
    }
}

/// Whether key `w` decrypts `block` to a plausible counter (upper 64 bits zero): true for
/// the key that made it, with probability 2^-64 for any other 32 bytes.
fn decrypts_to_a_counter(w: &[u8], block: &[u8]) -> bool {
    let d = Aes256Dec::new_from_slice(w).unwrap();
    let mut b = Array::try_from(block).unwrap();
    d.decrypt_block(&mut b);
    b[8..] == [0u8; 8]
}

#[test]
fn a_child_that_never_reads_holds_no_parent_key() {
    if scalrand_os::fork::detection() != scalrand_os::fork::Detection::WipeOnFork {
        // No wipe-on-fork memory here (an emulator whose `madvise` is not truthful, or not
        // Linux): a child that never reads keeps K and C until its first read erases them,
        // as the module docs say; the other fork tests cover that first read.
        eprintln!("skipped: no wipe-on-fork memory here");
        return;
    }
    register_early_handler();
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f: Fortuna = Fortuna::from_seed(mode, &[0x42; 32], zero as fn() -> Duration).unwrap();
        let mut warm = [0u8; 100];
        f.fill_bytes(&mut warm);
        let [a, b] = f.memory_ranges_for_tests();
        // The child scans its copy of the Fortuna's memory (it never reads); the parent reads
        // its next output right after the fork.
        // Allocated before the fork: the child of a raw `SYS_fork` must not allocate.
        let mut m = Vec::with_capacity(a.len() + b.len());
        let (ca, cb) = (a.clone(), b.clone());
        let (out, child) = in_child(
            raw_fork,
            move || {
                dump_into(ca, &mut m);
                dump_into(cb, &mut m);
                m
            },
            || {
                let mut o = vec![0u8; 4096];
                f.fill_bytes(&mut o);
                o
            },
        );
        let mem = child.expect("the child answered");
        assert!(mem.len() >= 64, "the hook gave the state memory");
        // No output block of the parent's post-fork read is in the child's memory...
        for blk in out.chunks_exact(16) {
            assert!(
                mem.windows(16).all(|w| w != blk),
                "{mode:?}: a parent output block in the child"
            );
        }
        // ...and no 32 bytes of it (any alignment) are a key that regenerates that output:
        // Locked output block 0 is E(K, C); Concurrent's is E(k_r, 1) with
        // k_r = E(K, C) || E(K, C + 1), C < 64 here.
        for w in mem.windows(32) {
            assert!(
                !decrypts_to_a_counter(w, &out[..16]),
                "{mode:?}: the parent's key is in the child's memory"
            );
            if mode == ReadMode::Concurrent {
                use aes::cipher::BlockCipherEncrypt;
                let e = aes::Aes256Enc::new_from_slice(w).unwrap();
                for c in 0u128..64 {
                    let mut k = [
                        Array::from(c.to_le_bytes()),
                        Array::from((c + 1).to_le_bytes()),
                    ];
                    e.encrypt_blocks(&mut k);
                    let kr: Vec<u8> = k.iter().flat_map(|x| x.iter().copied()).collect();
                    assert!(
                        !decrypts_to_a_counter(&kr, &out[..16]),
                        "{mode:?}: the parent's key is in the child's memory"
                    );
                }
            }
        }
        // Control: the same scan of the parent's own memory finds its (new) key.
        let mut mine = Vec::new();
        dump_into(a.clone(), &mut mine);
        dump_into(b.clone(), &mut mine);
        let mut next = [0u8; 16];
        if mode == ReadMode::Locked {
            f.fill_bytes(&mut next);
            assert!(
                mine.windows(32).any(|w| decrypts_to_a_counter(w, &next)),
                "the scan sees a key where there is one"
            );
        }
    }
}

// ---- (4) a fork while another thread holds the generator lock ------------------------

#[test]
fn a_fork_while_another_thread_holds_the_lock_does_not_hang_the_child() {
    register_early_handler();
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::new(mode).unwrap();
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            let f = &f;
            s.spawn(move || {
                f.hold_lock_for_tests(|| {
                    held_tx.send(()).unwrap();
                    let _ = go_rx.recv();
                });
            });
            held_rx.recv().unwrap();
            // The lock is held by the other thread right now; the child inherits it held.
            let (_, child) = in_child(
                libc_fork,
                || read(&|b| f.fill_bytes(b)),
                || {
                    go_tx.send(()).unwrap();
                },
            );
            assert!(
                child.is_some_and(|c| c.len() == N),
                "{mode:?}: the child hung on a lock its parent's thread held"
            );
        });
    }
}
