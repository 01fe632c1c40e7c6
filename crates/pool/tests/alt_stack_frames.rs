//! A signal handled on an alternate signal stack (`SA_ONSTACK`) while a section holds key
//! material: the kernel writes the interrupted registers at the top of that stack, and the
//! section's end zeroes it there (`scalrand_os::signal::wipe_alternate_stack`), as it wipes
//! the thread's own stack below it: with rseq when the section's watch saw the signal, and
//! without rseq (nothing can tell) at the end of every section.
//!
//! Deterministic: inside a section, a 16-byte marker stands in for key material: it is loaded
//! into `xmm15`, and the thread signals itself in the same `asm!` block, so the frame the
//! kernel writes on the alternate stack holds the marker. Once the read returns, the
//! alternate stack must not. The signal is sent from the key observer (`__observe_keys`),
//! which runs inside a read right after it derives a key: node pools' small reads (a batch
//! refill) and 4 KiB reads (a one-read key), and Fortuna reads with both PRFs, whose every
//! operation ends with its own wipe; with rseq, also from inside an rseq refill
//! (`__in_next_rseq_refill`, after the refill holds its key). The same signal sent outside
//! any section shows that the frame lands there and that the search finds it. Each check runs
//! on a thread with an rseq area and on one whose area is unregistered.
// x86_64: the marker goes into `xmm15`. Whether rseq runs here is asked at run time.
#![cfg(all(
    feature = "std",
    feature = "fortuna",
    target_os = "linux",
    target_arch = "x86_64",
    not(miri),
    not(scalrand_loom)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use scalrand_pool::chacha::__observe_keys;
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, ReadMode};
use scalrand_pool::numa::{__in_next_rseq_refill, NodePools, Topology};

/// Bytes of the alternate stack this test installs.
const ALT: usize = 64 << 10;

/// What stands in for key material in a register.
static MARKER: [u8; 16] = *b"\x5c\xa1\x7a\x4d-alt-stk\xf0\x0d\xbe\x01";

static HOOK_RAN: AtomicBool = AtomicBool::new(false);

extern "C" fn nothing(_: libc::c_int) {}

/// Loads the marker into `xmm15` and sends SIGUSR2 to this thread with `tgkill` in the same
/// block: the signal is delivered on the system call's return, with the marker in the frame's
/// register state. Then clears `xmm15`.
fn signal_with_marker() {
    // SAFETY: getpid and gettid have no preconditions.
    let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
    // SAFETY: loads 16 readable bytes, makes the tgkill(2) system call on this thread (its
    // clobbers, rcx and r11 and rax, declared), clears the one vector register it used.
    unsafe {
        core::arch::asm!(
            "movdqu xmm15, xmmword ptr [{m}]",
            "syscall",
            "pxor xmm15, xmm15",
            m = in(reg) MARKER.as_ptr(),
            inout("rax") libc::SYS_tgkill => _,
            in("rdi") pid,
            in("rsi") tid,
            in("rdx") libc::SIGUSR2,
            out("rcx") _,
            out("r11") _,
            out("xmm15") _,
            options(nostack),
        );
    }
}

thread_local! {
    /// Set to have the key observer signal this thread once.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn on_key(_: &[u8; 32]) {
    if ARMED.with(|a| a.replace(false)) {
        signal_with_marker();
    }
}

fn in_refill() {
    HOOK_RAN.store(true, Ordering::SeqCst);
    signal_with_marker();
}

/// Whether the `ALT` bytes at `alt` hold the marker anywhere.
fn holds_marker(alt: *const u8) -> bool {
    let mut copy = vec![0u8; ALT];
    // SAFETY: the alternate stack (a raw pointer: the kernel writes it behind the compiler's
    // back), `ALT` bytes, into `copy`.
    unsafe { core::ptr::copy_nonoverlapping(alt, copy.as_mut_ptr(), ALT) };
    copy.windows(MARKER.len()).any(|w| w == MARKER)
}

/// A read of one of the generators.
type Read<'a> = dyn Fn(&mut [u8]) + 'a;

/// Zeroes the `ALT` bytes at `alt`.
fn zero(alt: *mut u8) {
    // SAFETY: the alternate stack, `ALT` bytes, not in use (no handler runs now).
    unsafe { core::ptr::write_bytes(alt, 0, ALT) };
}

/// The two tests share the key observer and SIGUSR2's disposition: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// What one thread found: whether the control's frame was on the alternate stack, and the
/// reads after which the marker still was.
struct Found {
    control: bool,
    left: Vec<&'static str>,
}

/// On the calling thread: installs a 64 KiB alternate stack and a SIGUSR2 handler that runs
/// there, sends the control signal, then signals from inside each read (through the key
/// observer; with `refill_hook`, the first small read's rseq refill too) and reports after
/// which reads the marker stayed on the alternate stack.
fn signal_inside_each_read(refill_hook: bool) -> Found {
    let mut alt = vec![0u8; ALT];
    let alt_ptr = alt.as_mut_ptr();
    let new = libc::stack_t {
        ss_sp: alt_ptr.cast(),
        ss_flags: 0,
        ss_size: ALT,
    };
    // SAFETY: an all-zero `stack_t` and `sigaction` are valid; installs `alt` (live until it
    // is uninstalled below) as this thread's alternate stack, and a handler for SIGUSR2 that
    // runs there.
    let mut old: libc::stack_t = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    unsafe {
        assert_eq!(libc::sigaltstack(&raw const new, &raw mut old), 0);
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = nothing as *const () as usize;
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_RESTART;
        assert_eq!(
            libc::sigaction(libc::SIGUSR2, &raw const sa, core::ptr::null_mut()),
            0
        );
    }
    // The control: outside any section, the frame lands on the alternate stack and stays.
    signal_with_marker();
    let control = holds_marker(alt_ptr);
    let mut left = Vec::new();
    let mut buf = vec![0u8; 4096];
    if refill_hook {
        // Inside an rseq refill: the first small read on this CPU refills its slot.
        zero(alt_ptr);
        let pools = NodePools::new(Topology::from_nodes(vec![vec![0]])).unwrap();
        HOOK_RAN.store(false, Ordering::SeqCst);
        __in_next_rseq_refill(in_refill);
        pools.fill_bytes(&mut buf[..32]);
        assert!(
            HOOK_RAN.load(Ordering::SeqCst),
            "rseq runs here, but no refill ran the hook"
        );
        if holds_marker(alt_ptr) {
            left.push("rseq refill");
        }
    }
    // From the key observer, inside each read, after it derives a key.
    // Both warmed: the node key is derived and the slot's first batch made, so that the key
    // the observer sees next is a batch refill's (small reads, as many as a batch serves) or a
    // one-read key (large).
    let small = NodePools::new(Topology::from_nodes(vec![vec![0]])).unwrap();
    let large = NodePools::new(Topology::from_nodes(vec![vec![0]])).unwrap();
    small.fill_bytes(&mut buf[..32]);
    large.fill_bytes(&mut buf[..32]);
    let aes = Fortuna::<Aes256Prf>::with_prf(ReadMode::Concurrent).unwrap();
    let chacha = Fortuna::<ChaCha20Prf>::with_prf(ReadMode::Locked).unwrap();
    __observe_keys(Some(on_key));
    let reads: [(&'static str, &Read); 4] = [
        ("node pools 32 B (a batch refill)", &|b| {
            for _ in 0..scalrand_pool::numa::BATCH_LEN / 32 + 1 {
                small.fill_bytes(&mut b[..32]);
                if !ARMED.with(Cell::get) {
                    break;
                }
            }
        }),
        ("node pools 4 KiB (a one-read key)", &|b| {
            large.fill_bytes(b)
        }),
        ("Fortuna AES-256", &|b| aes.fill_bytes(&mut b[..32])),
        ("Fortuna ChaCha20", &|b| chacha.fill_bytes(&mut b[..32])),
    ];
    for (name, f) in reads {
        zero(alt_ptr);
        ARMED.with(|a| a.set(true));
        f(&mut buf);
        assert!(!ARMED.with(Cell::get), "{name}: the observer did not run");
        if holds_marker(alt_ptr) {
            left.push(name);
        }
    }
    __observe_keys(None);
    // SAFETY: `old` is what sigaltstack reported.
    unsafe { libc::sigaltstack(&raw const old, core::ptr::null_mut()) };
    drop(alt);
    Found { control, left }
}

fn check(found: &Found, thread: &str) {
    assert!(
        found.control,
        "{thread}: the control signal's frame is not on the alternate stack"
    );
    assert!(
        found.left.is_empty(),
        "{thread}: the frame of a signal inside these reads is still on the alternate stack after them: {:?}",
        found.left
    );
}

#[test]
fn with_rseq_a_section_wipes_the_frame_its_signal_left_on_the_alternate_stack() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if scalrand_os::cpu::rseq_cpu().is_none() {
        scalrand_testkit::rseq::nothing_to_check("the rseq-watched sections");
        return;
    }
    let found = std::thread::spawn(|| {
        assert!(scalrand_testkit::cpu::pin_to(0), "cannot pin to CPU 0");
        signal_inside_each_read(true)
    })
    .join()
    .unwrap();
    check(&found, "a thread with rseq");
}

#[test]
fn without_rseq_every_section_wipes_the_top_of_the_alternate_stack() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let found = std::thread::spawn(|| {
        // A thread glibc registered no area for (or none at all here) is the same case.
        let _ = scalrand_testkit::rseq::unregister_rseq();
        assert!(
            scalrand_os::cpu::rseq_cpu().is_none(),
            "this thread still has an rseq area"
        );
        signal_inside_each_read(false)
    })
    .join()
    .unwrap();
    check(&found, "a thread without rseq");
}
