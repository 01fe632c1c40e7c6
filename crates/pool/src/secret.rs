//! Memory for keys and unread output, for both generators: wipe-on-fork memory where the OS
//! offers it ([`WipeOnFork`](scalrand_os::wipe::WipeOnFork): a fork child finds it zeroed),
//! the ordinary heap otherwise. Loom models no fork and its atomics are not plain words, so
//! loom builds (`--cfg scalrand_loom`) use a boxed slice.

/// A fixed number of `T`s in memory a fork child gets zeroed (see the module docs).
#[cfg(not(scalrand_loom))]
pub(crate) type Secret<T> = scalrand_os::wipe::WipeOnFork<T>;
/// A fixed number of `T`s on the heap (loom builds: see the module docs).
#[cfg(scalrand_loom)]
pub(crate) type Secret<T> = alloc::boxed::Box<[T]>;

/// `len` values made by `init`, in wipe-on-fork memory; with `heap`, on the ordinary heap even
/// where the OS could wipe it (the fallback, for tests).
#[cfg(not(scalrand_loom))]
pub(crate) fn secret<T: scalrand_os::wipe::ZeroValid>(
    len: usize,
    heap: bool,
    init: impl FnMut(usize) -> T,
) -> Secret<T> {
    if heap {
        scalrand_os::wipe::WipeOnFork::on_heap(len, init)
    } else {
        scalrand_os::wipe::WipeOnFork::new(len, init)
    }
}

/// `len` values made by `init` (loom builds).
#[cfg(scalrand_loom)]
pub(crate) fn secret<T>(len: usize, _heap: bool, init: impl FnMut(usize) -> T) -> Secret<T> {
    (0..len).map(init).collect()
}

/// `len` values whose every byte is zero, in wipe-on-fork memory where they are mapped: not
/// written there (a fresh mapping reads zero), so a page takes memory only once one of its
/// values is used. `zero` makes the same value where they are built instead (`heap`, and
/// the OS without such memory).
#[cfg(not(scalrand_loom))]
pub(crate) fn secret_zeroed<T: scalrand_os::wipe::ZeroValid>(
    len: usize,
    heap: bool,
    zero: impl FnMut(usize) -> T,
) -> Secret<T> {
    if heap {
        scalrand_os::wipe::WipeOnFork::on_heap(len, zero)
    } else {
        scalrand_os::wipe::WipeOnFork::zeroed(len)
    }
}

/// `len` values made by `zero` (loom builds).
#[cfg(scalrand_loom)]
pub(crate) fn secret_zeroed<T>(len: usize, _heap: bool, zero: impl FnMut(usize) -> T) -> Secret<T> {
    (0..len).map(zero).collect()
}
