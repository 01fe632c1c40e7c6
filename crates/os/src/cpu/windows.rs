//! Windows numbers processors within groups of at most 64; the slot is the processor's index
//! with the groups laid end to end, below `GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS)`,
//! which is what [`possible`](super::possible) returns there.

use super::Source;

/// `PROCESSOR_NUMBER` (winnt.h).
#[repr(C)]
struct ProcessorNumber {
    group: u16,
    number: u8,
    reserved: u8,
}

/// `ALL_PROCESSOR_GROUPS` (winnt.h).
const ALL_PROCESSOR_GROUPS: u16 = 0xffff;

#[link(name = "kernel32")]
unsafe extern "system" {
    // Both since Windows 7 / Server 2008 R2.
    fn GetCurrentProcessorNumberEx(number: *mut ProcessorNumber);
    fn GetMaximumProcessorCount(group: u16) -> u32;
}

pub(super) fn max_processors() -> usize {
    // SAFETY: no preconditions; 0 means failure.
    unsafe { GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS) as usize }
}

#[inline]
pub(super) fn current() -> Option<usize> {
    let mut p = ProcessorNumber {
        group: 0,
        number: 0,
        reserved: 0,
    };
    // SAFETY: writes one `PROCESSOR_NUMBER` through a valid pointer.
    unsafe { GetCurrentProcessorNumberEx(&mut p) };
    // Machines with more than 64 logical processors only: the groups before this one.
    let before: usize = (0..p.group)
        // SAFETY: no preconditions.
        .map(|g| unsafe { GetMaximumProcessorCount(g) } as usize)
        .sum();
    Some(before + usize::from(p.number))
}

pub(super) fn source() -> Source {
    Source::ProcessorNumber
}
