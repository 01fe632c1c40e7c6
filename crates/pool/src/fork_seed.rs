//! What a fork child of either generator mixes into its keys before its first answer: 32
//! fresh bytes from the OS, the child's pid, its fork generation
//! ([`scalrand_os::fork::generation`]) and the wall clock.
//!
//! The fresh OS bytes are the defence: siblings share everything they inherited, and children
//! started as pid 1 of their own namespaces in the same clock tick share the pid and the
//! clock too. So a child whose OS read fails gets an error here and **fails closed** (its
//! generator answers nothing until a later read gets entropy). The pid, generation and clock
//! are an extra.

use scalrand_os::wipe::zero;

/// Bytes of a fork seed: OS bytes (32) ‖ pid (8) ‖ generation (8) ‖ wall clock in ns (16),
/// integers little-endian.
pub(crate) const FORK_SEED_LEN: usize = 64;

/// Writes a fork seed for fork generation `generation` into `seed`, [`FORK_SEED_LEN`] bytes
/// (see the module docs).
/// Without `std` there is no OS to ask and no fork to detect: only the generation is written.
///
/// # Errors
/// The OS entropy source's error, with `seed` zeroed.
pub(crate) fn fork_seed(
    generation: usize,
    seed: &mut [u8],
) -> Result<(), scalrand_os::entropy::EntropyError> {
    debug_assert_eq!(seed.len(), FORK_SEED_LEN);
    zero(seed);
    let (os, rest) = seed.split_at_mut(32);
    let (pid, rest) = rest.split_at_mut(8);
    let (gen_, now) = rest.split_at_mut(8);
    gen_.copy_from_slice(&(generation as u64).to_le_bytes());
    #[cfg(feature = "std")]
    {
        if let Err(e) = scalrand_os::entropy::fill(os) {
            zero(os);
            zero(gen_);
            return Err(e);
        }
        pid.copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
        // The wall clock: a vDSO call, no lock or lazy initialiser a parent thread could have
        // held at the fork. (Miri's isolation has no wall clock: zeros there.)
        #[cfg(not(miri))]
        now.copy_from_slice(
            &std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
                .to_le_bytes(),
        );
        #[cfg(miri)]
        let _ = now;
    }
    #[cfg(not(feature = "std"))]
    let _ = (os, pid, now);
    Ok(())
}
