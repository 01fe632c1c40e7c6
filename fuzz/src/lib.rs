//! Helpers shared by the fuzz targets in `fuzz_targets/`.

use std::cell::RefCell;

/// Runs `f` on `len` zeroed bytes of one reused per-thread buffer, so a target that reads
/// megabytes does not page-fault fresh memory (and feed ASan's quarantine) on every input.
/// Zeroing first keeps "every byte was written" checks meaningful.
pub fn with_buf<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BUF.with_borrow_mut(|b| {
        if b.len() < len {
            b.resize(len, 0);
        }
        let s = &mut b[..len];
        s.fill(0);
        f(s)
    })
}
