//! Stack scans at every instruction, and signals injected at any chosen instruction, by
//! single-stepping a forked child under `ptrace`.
//!
//! A fork from another thread copies the reading thread's stack as it is at that instruction;
//! a signal writes a frame of every register below the stack pointer at that instruction.
//! Timing-based tests (fork at a random moment, signals at random intervals) hit a short
//! exposure only now and then. Here a tracer walks the work one instruction at a time instead:
//!
//! * [`scan_every_step`]: after each instruction it reads the stack below the point where the
//!   work started (64 KiB, and the red zone below the stack pointer) and looks, wherever a byte
//!   changed, for a 16-byte piece of any key the work derives: either half of it, or one of its
//!   32-bit words repeated four times (a word broadcast across a vector register's lanes, as the
//!   wide ChaCha backends hold the key). A hit is a moment at which a fork child would find it.
//! * [`signals_at_steps`]: runs the work to instruction `n`, delivers a signal there (the
//!   child's handler runs on the thread's stack, or on an alternate stack), lets the work
//!   finish, and scans the same memory, and the alternate stack, once at the end: what a signal
//!   frame left behind after the work's own wipes. One single-stepped run ([`record_steps`])
//!   says where each instruction begins; each signal's run then gets to its instruction at full
//!   speed, stopping at a breakpoint there.
//!
//! The keys are learnt in a first, untraced child that runs the same work with the key
//! observer installed; the work must therefore be deterministic (a seeded generator, built
//! inside the work so that neither child inherits a fork-detected instance) and run on one
//! CPU (both children are pinned to CPU 0). rseq is unregistered in both children: a single
//! step inside a restartable section makes the kernel abort it, forever.
//!
//! A `rep stos`/`rep movs` instruction counts as one instruction (it runs to a breakpoint placed
//! after it): single-stepped, it would take one step per byte. Linux x86_64 only. The tracer
//! allocates freely; the children are forked from a test thread and allocate only inside the work.

use std::collections::HashSet;

/// Where a key piece was found.
#[derive(Clone, Debug)]
pub struct Hit {
    /// The instruction count at which it was there (0: at the end).
    pub step: u64,
    /// The instruction pointer then, as an offset into the test executable's file (for
    /// `addr2line -f -C -e EXE 0x..`) when it lies in it, else the address.
    pub rip: u64,
    /// Its address minus the stack pointer then (negative: below the stack pointer).
    pub from_sp: i64,
    /// Which key (index into the keys the work derived) and which piece of it.
    pub key: usize,
    /// `"half 0"`, `"half 1"` or `"word k x4"`.
    pub piece: String,
}

/// What a traced run saw.
#[derive(Clone, Debug, Default)]
pub struct Traced {
    /// Keys the work derived (from the untraced child).
    pub keys: usize,
    /// Instructions stepped ([`signals_at_steps`]: the instruction aimed at).
    pub steps: u64,
    /// Where key pieces were found (at most 16 kept).
    pub hits: Vec<Hit>,
    /// All hits, counted.
    pub hit_count: u64,
    /// Hits that were a key half (16 contiguous key bytes), counted.
    pub half_hits: u64,
    /// The first of those (at most 8).
    pub halves: Vec<Hit>,
    /// [`signals_at_steps`]: where the signal was delivered (instruction pointer as in
    /// [`Hit::rip`]) and the stack pointer's distance below where the traced stretch started
    /// (0 where it is above that).
    pub signal_at: Option<(u64, u64)>,
}

/// The key observer a crate under test exposes (`__observe_keys`).
pub type Install = fn(Option<fn(&[u8; 32])>);

/// Marks the traced stretch inside the work: call [`Marks::start`] right before the code under
/// test and [`Marks::stop`] right after it. Untraced, both do nothing.
#[derive(Debug)]
pub struct Marks {
    traced: bool,
}

impl Marks {
    /// Start of the traced stretch.
    pub fn start(&self) {
        if self.traced {
            // SAFETY: raise(2) on this process; the tracer catches the stop.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
    }

    /// End of the traced stretch.
    pub fn stop(&self) {
        self.start();
    }
}

const BELOW: usize = 64 << 10;
const ABOVE: usize = 256;

/// The keys the untraced child's observer saw, in the child (see [`keys_of`]).
static SEEN: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());

fn note_key(k: &[u8; 32]) {
    SEEN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend_from_slice(k);
}

fn child_setup() {
    assert!(crate::cpu::pin_to(0), "pin to CPU 0");
    // Not every kernel or libc registers rseq; either way none is left.
    let _ = crate::rseq::unregister_rseq();
}

/// Runs `work` in an untraced child with the observer on; returns the keys it derived.
pub fn keys_of(install: Install, work: &(dyn Fn(&Marks) + Sync)) -> Vec<[u8; 32]> {
    let ((), bytes) = crate::fork::in_child(
        crate::fork::libc_fork,
        || {
            child_setup();
            install(Some(note_key));
            work(&Marks { traced: false });
            install(None);
            core::mem::take(
                &mut *SEEN
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            )
        },
        || {},
    );
    bytes
        .expect("the untraced child failed")
        .chunks_exact(32)
        .map(|c| c.try_into().unwrap())
        .collect()
}

use crate::stack::{Forms, Piece};

/// The pieces searched for ([`crate::stack::key_pieces`]), as a set and with their names.
fn pieces(keys: &[[u8; 32]], forms: Forms) -> (HashSet<[u8; 16]>, Vec<Piece>) {
    let named = crate::stack::key_pieces_of(keys, forms);
    (named.iter().map(|(p, _, _)| *p).collect(), named)
}

/// Where the executable's first mapping starts, if `rip` lies in this process's executable
/// (the child's mappings are this process's), else 0.
fn exe_base(rip: u64) -> u64 {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    let exe = exe.to_string_lossy();
    let mut base = None;
    let mut inside = false;
    for line in maps.lines().filter(|l| l.ends_with(&*exe)) {
        let range = line.split(' ').next().unwrap_or("");
        let (a, b) = range.split_once('-').unwrap_or(("0", "0"));
        let (a, b) = (
            u64::from_str_radix(a, 16).unwrap_or(0),
            u64::from_str_radix(b, 16).unwrap_or(0),
        );
        base.get_or_insert(a);
        inside |= (a..b).contains(&rip);
    }
    if inside { base.unwrap_or(0) } else { 0 }
}

/// Pieces of `keys` (as [`scan_every_step`] searches for them) found anywhere in `mem`, which
/// starts at address `base`: how many, and the first (its address minus `base` in `from_sp`).
pub fn find_key_pieces(mem: &[u8], base: u64, keys: &[[u8; 32]]) -> Traced {
    find_key_pieces_of(mem, base, keys, Forms::All)
}

/// [`find_key_pieces`] for the given forms of each key ([`Forms::Unsliced`] for very many
/// keys).
pub fn find_key_pieces_of(mem: &[u8], base: u64, keys: &[[u8; 32]], forms: Forms) -> Traced {
    let (set, named) = pieces(keys, forms);
    let mut out = Traced {
        keys: keys.len(),
        ..Traced::default()
    };
    // SAFETY: an all-zero `user_regs_struct` is valid (a placeholder: no registers here).
    let mut r: libc::user_regs_struct = unsafe { core::mem::zeroed() };
    r.rsp = base;
    search(mem, base, None, &set, &named, 0, &r, &mut out);
    drop((set, named));
    crate::regs::clear();
    out
}

fn wait(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    // SAFETY: waits for our own child into a local.
    let r = unsafe { libc::waitpid(pid, &raw mut status, libc::__WALL) };
    assert_eq!(r, pid, "waitpid: {}", std::io::Error::last_os_error());
    status
}

fn regs(pid: libc::pid_t) -> libc::user_regs_struct {
    // SAFETY: an all-zero `user_regs_struct` is valid; PTRACE_GETREGS fills it.
    let mut r: libc::user_regs_struct = unsafe { core::mem::zeroed() };
    // SAFETY: our stopped tracee, a valid out pointer.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGS,
            pid,
            core::ptr::null_mut::<libc::c_void>(),
            &raw mut r,
        )
    };
    assert_eq!(rc, 0, "PTRACE_GETREGS: {}", std::io::Error::last_os_error());
    r
}

fn read_mem(pid: libc::pid_t, addr: u64, out: &mut [u8]) {
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: out.len(),
    };
    // SAFETY: one local and one remote iovec; the local one is our buffer.
    let n = unsafe { libc::process_vm_readv(pid, &raw const local, 1, &raw const remote, 1, 0) };
    assert_eq!(
        n,
        out.len() as isize,
        "process_vm_readv: {}",
        std::io::Error::last_os_error()
    );
}

fn ptrace(req: libc::c_uint, pid: libc::pid_t, data: usize) {
    // SAFETY: a request on our own tracee with no address argument.
    let rc = unsafe {
        libc::ptrace(
            req,
            pid,
            core::ptr::null_mut::<libc::c_void>(),
            data as *mut libc::c_void,
        )
    };
    assert_eq!(rc, 0, "ptrace {req}: {}", std::io::Error::last_os_error());
}

/// The length of the `rep stos`/`rep movs` instruction at `rip` (prefix `f3`, an optional
/// REX prefix, opcode `a4`/`a5`/`aa`/`ab`), if that is what is there. A single step runs one
/// iteration of such an instruction (one byte of a `rep stosb`), so [`step`] runs it whole.
fn rep_string_len(pid: libc::pid_t, rip: u64) -> Option<u64> {
    let mut b = [0u8; 3];
    read_mem(pid, rip, &mut b);
    let op = |x: u8| matches!(x, 0xa4 | 0xa5 | 0xaa | 0xab);
    match b {
        [0xf3, x, _] if op(x) => Some(2),
        [0xf3, r, x] if (0x40..=0x4f).contains(&r) && op(x) => Some(3),
        _ => None,
    }
}

/// Runs one instruction of the stopped tracee (a whole `rep` string instruction as one, up to
/// a breakpoint after it) and returns the stop status.
fn step(pid: libc::pid_t) -> libc::c_int {
    step_from(pid, regs(pid).rip)
}

/// [`step`] for a tracee stopped at `rip`.
fn step_from(pid: libc::pid_t, rip: u64) -> libc::c_int {
    let Some(len) = rep_string_len(pid, rip) else {
        ptrace(libc::PTRACE_SINGLESTEP, pid, 0);
        return wait(pid);
    };
    run_to_breakpoint(pid, rip + len)
}

/// Runs the stopped tracee on to a breakpoint at `at` (an `int3` in place of the byte there,
/// the original word put back once it stops) and returns the stop status. A stop at the
/// breakpoint leaves the tracee at `at`, as if no breakpoint had been there.
fn run_to_breakpoint(pid: libc::pid_t, at: u64) -> libc::c_int {
    // SAFETY: PEEKTEXT of one word of the stopped tracee's code (a word that is -1 is told
    // from a failure by `errno`, cleared first).
    let word = unsafe {
        *libc::__errno_location() = 0;
        let w = libc::ptrace(
            libc::PTRACE_PEEKTEXT,
            pid,
            at as *mut libc::c_void,
            core::ptr::null_mut::<libc::c_void>(),
        );
        assert!(
            w != -1 || *libc::__errno_location() == 0,
            "PTRACE_PEEKTEXT at {at:#x}: {}",
            std::io::Error::last_os_error()
        );
        w
    };
    let poke = |w: libc::c_long| {
        // SAFETY: POKETEXT of one word of the stopped tracee's code: the breakpoint, or the
        // original word back.
        let rc = unsafe {
            libc::ptrace(
                libc::PTRACE_POKETEXT,
                pid,
                at as *mut libc::c_void,
                w as *mut libc::c_void,
            )
        };
        assert_eq!(
            rc,
            0,
            "PTRACE_POKETEXT at {at:#x}: {}",
            std::io::Error::last_os_error()
        );
    };
    poke((word & !0xff) | 0xcc);
    ptrace(libc::PTRACE_CONT, pid, 0);
    let st = wait(pid);
    poke(word);
    if libc::WIFSTOPPED(st) && libc::WSTOPSIG(st) == libc::SIGTRAP {
        let mut r = regs(pid);
        if r.rip == at + 1 {
            r.rip = at;
            set_regs(pid, &r);
        }
    }
    st
}

/// Forks the traced child and returns its pid, stopped at [`Marks::start`].
/// Bytes the traced child zeroes below it first: twice the scanned window, so the window
/// (which starts where the work starts, a few frames below) lies inside it. Its stack is a
/// copy of the tracer thread's, which handled the keys (read back from the first child, cut
/// into pieces, hashed); whatever of them lies in the window is then the work's own doing.
const CLEARED: usize = 2 * BELOW;

fn traced_child(prepare: fn(), work: &(dyn Fn(&Marks) + Sync)) -> libc::pid_t {
    let pid = crate::fork::libc_fork();
    if pid == 0 {
        crate::stack::zero_below::<CLEARED>();
        child_setup();
        prepare();
        // SAFETY: PTRACE_TRACEME takes no pointers.
        unsafe {
            libc::ptrace(
                libc::PTRACE_TRACEME,
                0,
                core::ptr::null_mut::<libc::c_void>(),
                core::ptr::null_mut::<libc::c_void>(),
            )
        };
        work(&Marks { traced: true });
        // SAFETY: as in `keys_of`.
        unsafe { libc::_exit(0) };
    }
    let st = wait(pid);
    assert!(
        libc::WIFSTOPPED(st) && libc::WSTOPSIG(st) == libc::SIGSTOP,
        "the traced child did not reach its start mark: {st:#x}"
    );
    ptrace(
        libc::PTRACE_SETOPTIONS,
        pid,
        libc::PTRACE_O_EXITKILL as usize,
    );
    pid
}

/// Lets the traced child run to its end and reaps it.
fn finish(pid: libc::pid_t) {
    ptrace(libc::PTRACE_CONT, pid, 0);
    loop {
        let st = wait(pid);
        if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
            assert!(
                libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
                "the traced child failed: {st:#x}"
            );
            return;
        }
        ptrace(libc::PTRACE_CONT, pid, 0);
    }
}

/// Looks for key pieces in `mem` (which starts at `base`) at every offset whose 16 bytes
/// include one in `changed` (or everywhere when `changed` is `None`).
#[allow(clippy::too_many_arguments)]
fn search(
    mem: &[u8],
    base: u64,
    changed: Option<&[u8]>,
    set: &HashSet<[u8; 16]>,
    named: &[Piece],
    step: u64,
    r: &libc::user_regs_struct,
    out: &mut Traced,
) {
    let chunks = mem.len() / 16;
    let differs = |c: usize| match changed {
        None => true,
        Some(prev) => c < chunks && mem[16 * c..16 * c + 16] != prev[16 * c..16 * c + 16],
    };
    for c in 0..chunks {
        // A window starting in chunk `c` lies in chunks `c` and `c + 1`: look only where one of
        // them changed.
        if !differs(c) && !differs(c + 1) {
            continue;
        }
        for s in 16 * c..(16 * c + 16).min(mem.len() - 15) {
            let w: [u8; 16] = mem[s..s + 16].try_into().unwrap();
            if set.contains(&w) {
                out.hit_count += 1;
                let (_, key, piece) = named.iter().find(|(p, _, _)| *p == w).unwrap();
                let hit = Hit {
                    step,
                    rip: r.rip - exe_base(r.rip),
                    from_sp: (base + s as u64) as i64 - r.rsp as i64,
                    key: *key,
                    piece: piece.to_string(),
                };
                if piece.is_half() {
                    out.half_hits += 1;
                    if out.halves.len() < 8 {
                        out.halves.push(hit.clone());
                    }
                }
                if out.hits.len() < 16 {
                    out.hits.push(hit);
                }
            }
        }
    }
}

/// Single-steps `work`'s traced stretch and looks for key pieces in its stack after every
/// instruction (see the module docs). `prepare` runs in the traced child before the work.
pub fn scan_every_step(install: Install, work: &(dyn Fn(&Marks) + Sync)) -> Traced {
    let keys = keys_of(install, work);
    let (set, named) = pieces(&keys, Forms::All);
    let mut out = Traced {
        keys: keys.len(),
        ..Traced::default()
    };
    let pid = traced_child(|| {}, work);
    let r0 = regs(pid);
    let base = r0.rsp - BELOW as u64;
    let mut prev = vec![0u8; BELOW + ABOVE];
    let mut cur = vec![0u8; BELOW + ABOVE];
    read_mem(pid, base, &mut prev);
    loop {
        let st = step(pid);
        assert!(libc::WIFSTOPPED(st), "the traced child ended: {st:#x}");
        let sig = libc::WSTOPSIG(st);
        if sig == libc::SIGSTOP {
            break;
        }
        assert_eq!(sig, libc::SIGTRAP, "unexpected stop signal {sig}");
        out.steps += 1;
        let r = regs(pid);
        read_mem(pid, base, &mut cur);
        search(
            &cur,
            base,
            Some(&prev),
            &set,
            &named,
            out.steps,
            &r,
            &mut out,
        );
        core::mem::swap(&mut prev, &mut cur);
    }
    finish(pid);
    out
}

/// Where a signal handler runs in [`signals_at_steps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerStack {
    /// The interrupted thread's own stack.
    Thread,
    /// An alternate stack (`sigaltstack`, `SA_ONSTACK`) of 64 KiB.
    Alternate,
}

static mut ALT: [u8; ALT_LEN] = [0; ALT_LEN];
const ALT_LEN: usize = 64 << 10;

extern "C" fn nothing(_: libc::c_int) {}

fn install_handler(stack: HandlerStack) {
    // SAFETY: an all-zero sigaction is valid; the handler is an extern "C" fn(c_int).
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = nothing as *const () as usize;
        if stack == HandlerStack::Alternate {
            let ss = libc::stack_t {
                ss_sp: (&raw mut ALT).cast(),
                ss_flags: 0,
                ss_size: ALT_LEN,
            };
            assert_eq!(libc::sigaltstack(&raw const ss, core::ptr::null_mut()), 0);
            sa.sa_flags = libc::SA_ONSTACK;
        }
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &raw const sa, core::ptr::null_mut()),
            0
        );
    }
}

fn install_thread() {
    install_handler(HandlerStack::Thread);
}

fn install_alternate() {
    install_handler(HandlerStack::Alternate);
}

/// Where each instruction of a traced run of a work's stretch began, in order ([`record_steps`]).
#[derive(Clone, Debug)]
pub struct Steps {
    rips: Vec<u64>,
}

impl Steps {
    /// The number of instructions in the stretch.
    pub fn count(&self) -> u64 {
        self.rips.len() as u64
    }

    /// The address where each instruction began, in order.
    pub fn addresses(&self) -> &[u64] {
        &self.rips
    }
}

/// Single-steps `work`'s traced stretch once and records where each instruction began.
pub fn record_steps(work: &(dyn Fn(&Marks) + Sync)) -> Steps {
    let pid = traced_child(|| {}, work);
    let mut rips = Vec::new();
    loop {
        let rip = regs(pid).rip;
        let st = step_from(pid, rip);
        assert!(libc::WIFSTOPPED(st), "the traced child ended: {st:#x}");
        if libc::WSTOPSIG(st) == libc::SIGSTOP {
            break;
        }
        rips.push(rip);
    }
    finish(pid);
    Steps { rips }
}

/// For each instruction count `n` of `ns` (one result each, in `ns`'s order): runs `work`'s
/// traced stretch to instruction `n`, delivers `SIGUSR1` there (a handler that does nothing,
/// on `stack`), runs on to the stop mark and scans the thread's stack (and the alternate
/// stack) once for pieces of `keys` (see the module docs).
///
/// The tracee gets to instruction `n` at full speed, not one step at a time: `steps` (the
/// same work's [`record_steps`]) says at which address instruction `n` begins and how many
/// times the run was there before, and a breakpoint there counts the arrivals. Where the run
/// follows the recorded one (the work is deterministic, on one CPU), that arrival is
/// instruction `n`. A run may stray from it: the recorded run is single-stepped, a thousand
/// times slower (a time-dependent branch, a clock read's retry), and its heap and stack may lie
/// at other alignments (a copy's instruction count). The signal then still lands on the same
/// instruction of the read, at another pass; where the run passes it fewer times, it reaches
/// the stop mark first and the result has no [`Traced::signal_at`].
pub fn signals_at_steps(
    keys: &[[u8; 32]],
    work: &(dyn Fn(&Marks) + Sync),
    steps: &Steps,
    ns: &[u64],
    stack: HandlerStack,
) -> Vec<Traced> {
    let (set, named) = pieces(keys, Forms::All);
    let prepare = match stack {
        HandlerStack::Thread => install_thread as fn(),
        HandlerStack::Alternate => install_alternate as fn(),
    };
    ns.iter()
        .map(|&n| {
            let mut out = Traced {
                keys: keys.len(),
                ..Traced::default()
            };
            let pid = traced_child(prepare, work);
            let r0 = regs(pid);
            let base = r0.rsp - BELOW as u64;
            if !run_to(pid, steps, n) {
                // Shorter than `n`: nothing to interrupt.
                finish(pid);
                return out;
            }
            out.steps = n;
            let at = regs(pid);
            out.signal_at = Some((at.rip - exe_base(at.rip), r0.rsp.saturating_sub(at.rsp)));
            // Deliver the signal as the tracee resumes, then run to the stop mark (the
            // handler's own stops, if any, are passed through).
            ptrace(libc::PTRACE_CONT, pid, libc::SIGUSR1 as usize);
            loop {
                let st = wait(pid);
                assert!(libc::WIFSTOPPED(st), "the traced child ended: {st:#x}");
                if libc::WSTOPSIG(st) == libc::SIGSTOP {
                    break;
                }
                ptrace(libc::PTRACE_CONT, pid, libc::WSTOPSIG(st) as usize);
            }
            let r = regs(pid);
            let mut mem = vec![0u8; BELOW + ABOVE];
            read_mem(pid, base, &mut mem);
            search(&mem, base, None, &set, &named, 0, &r, &mut out);
            if stack == HandlerStack::Alternate {
                let mut alt = vec![0u8; ALT_LEN];
                read_mem(pid, (&raw const ALT) as u64, &mut alt);
                search(
                    &alt,
                    (&raw const ALT) as u64,
                    None,
                    &set,
                    &named,
                    0,
                    &r,
                    &mut out,
                );
            }
            finish(pid);
            out
        })
        .collect()
}

/// Runs the tracee, stopped at its start mark, to the start of instruction `n` of `steps`
/// (counting from 0): a breakpoint at that instruction's address, passed over (one step) on
/// every arrival before the one that is instruction `n`. False where the run reached its
/// stop mark first, or has fewer instructions.
fn run_to(pid: libc::pid_t, steps: &Steps, n: u64) -> bool {
    let Some(&target) = usize::try_from(n).ok().and_then(|n| steps.rips.get(n)) else {
        return false;
    };
    let earlier = steps.rips[..n as usize]
        .iter()
        .filter(|&&r| r == target)
        .count();
    if n == 0 {
        return true;
    }
    let mut arrivals = 0;
    loop {
        let st = run_to_breakpoint(pid, target);
        assert!(libc::WIFSTOPPED(st), "the traced child ended: {st:#x}");
        match libc::WSTOPSIG(st) {
            libc::SIGSTOP => return false,
            libc::SIGTRAP => {}
            sig => panic!("unexpected stop signal {sig}"),
        }
        assert_eq!(regs(pid).rip, target, "a trap away from the breakpoint");
        if arrivals == earlier {
            return true;
        }
        arrivals += 1;
        let st = step_from(pid, target);
        assert!(
            libc::WIFSTOPPED(st) && libc::WSTOPSIG(st) == libc::SIGTRAP,
            "the traced child did not stop after one instruction: {st:#x}"
        );
    }
}

fn set_regs(pid: libc::pid_t, r: &libc::user_regs_struct) {
    // SAFETY: our stopped tracee, a valid register set.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_SETREGS,
            pid,
            core::ptr::null_mut::<libc::c_void>(),
            r as *const libc::user_regs_struct,
        )
    };
    assert_eq!(rc, 0, "PTRACE_SETREGS: {}", std::io::Error::last_os_error());
}
