//! The check of the signal check: a work that holds a key only in two vector registers, for
//! the second half of a loop, leaves a piece of it in a signal frame exactly when the signal
//! lands in that half. `signals_at_steps` reaches each instruction through a breakpoint and a
//! count of arrivals at its address, not by single steps; every address of the loop is
//! reached a hundred times, so a signal there lands in the right half only if the arrivals
//! are counted right, and one aimed at the first round that holds the key, or at the same
//! instruction one round earlier, only if they are counted exactly.
#![cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_env = "gnu",
    not(miri)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_testkit::trace::{HandlerStack, Marks, record_steps, signals_at_steps};

/// A key kept in read-only data (which the search does not scan), never on the stack.
static KEY: [u8; 32] = [
    0x8c, 0x4b, 0xf0, 0xf2, 0x3e, 0x7b, 0xef, 0x69, 0x68, 0x32, 0xc6, 0xf7, 0x74, 0xeb, 0x31, 0x16,
    0x3a, 0x82, 0x8e, 0x82, 0x5e, 0xdc, 0x03, 0xc2, 0x0e, 0x03, 0x05, 0xff, 0x5f, 0x43, 0x6a, 0xd4,
];

/// A loop of 100 rounds of 24 instructions (26 in round 51, which loads the key); from round 51
/// on, the key is in `xmm0` and `xmm1`; both registers zeroed after it.
fn holds_the_key_in_registers(m: &Marks) {
    m.start();
    // SAFETY: reads 32 bytes of a static; clobbers only the registers it names.
    unsafe {
        core::arch::asm!(
            "pxor xmm0, xmm0",
            "pxor xmm1, xmm1",
            "mov ecx, 100",
            "2:",
            "cmp ecx, 50",
            "jne 3f",
            "movdqu xmm0, [{k}]",
            "movdqu xmm1, [{k} + 16]",
            "3:",
            ".rept 20",
            "nop",
            ".endr",
            "dec ecx",
            "jnz 2b",
            "pxor xmm0, xmm0",
            "pxor xmm1, xmm1",
            k = in(reg) KEY.as_ptr(),
            out("ecx") _,
            out("xmm0") _,
            out("xmm1") _,
            options(nostack, readonly),
        );
    }
    m.stop();
}

#[test]
fn a_signal_frame_holds_the_key_only_while_a_register_does() {
    let recorded = record_steps(&holds_the_key_in_registers);
    let steps = recorded.count();
    assert!(steps > 2400, "{steps} instructions");
    // The first load of the key: the one instruction of the loop's body run only once, right
    // after the loop's conditional jump (run every round).
    let a = recorded.addresses();
    let times = |x: u64| a.iter().filter(|&&y| y == x).count();
    let load = (1..a.len())
        .find(|&i| times(a[i]) == 1 && times(a[i - 1]) == 100)
        .expect("the key's load");
    // The first instruction after both loads, and the same instruction one round earlier.
    let first_held = load as u64 + 2;
    let round_before = a[..load].iter().rposition(|&x| x == a[load + 2]).unwrap() as u64;
    assert_eq!(first_held - round_before, 26, "one round apart");
    // Out of order on purpose: the results come back in the order asked.
    let ns = [
        3 * steps / 4,
        first_held,
        steps / 4,
        round_before,
        steps - 3,
    ];
    let want = [true, true, false, false, false];
    for stack in [HandlerStack::Thread, HandlerStack::Alternate] {
        let t = signals_at_steps(&[KEY], &holds_the_key_in_registers, &recorded, &ns, stack);
        let hits: Vec<u64> = t.iter().map(|t| t.hit_count).collect();
        assert_eq!(
            hits.iter().map(|&h| h > 0).collect::<Vec<_>>(),
            want,
            "{stack:?}: hits {hits:?} for signals at {ns:?} of {steps} instructions"
        );
        assert!(t[0].hits.iter().any(|h| h.piece.starts_with("half")));
        assert!(
            t.iter().all(|t| t.signal_at.is_some()),
            "every signal delivered"
        );
        assert_eq!(t.iter().map(|t| t.steps).collect::<Vec<_>>(), ns);
    }
}
