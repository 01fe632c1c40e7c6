//! The memory-side cache model on hand-worked access sequences.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use scalrand_shuffle::{CacheMode, MemSideCache};

#[test]
fn line_mode_indexing_and_counts() {
    // 4 lines of 64 B: set = (PA / 64) mod 4.
    let mut c = MemSideCache::new(256, CacheMode::Line).unwrap();
    c.access(0); // set 0, cold miss
    c.access(63); // same line: hit
    c.access(256); // set 0 again, other line: conflict
    c.access(0); // conflict back
    c.access(64); // set 1: cold
    c.access(64 + 4096 * 3); // line 193 -> set 1: conflict
    let s = c.stats();
    assert_eq!((s.accesses, s.hits, s.misses, s.conflicts), (6, 1, 5, 3));
    assert!((s.conflict_rate() - 0.5).abs() < 1e-12);
}

#[test]
fn page_colour_mode() {
    // 8 KiB: two colours; colour = PFN mod 2.
    let mut c = MemSideCache::new(8192, CacheMode::PageColour).unwrap();
    assert_eq!(c.colours(), 2);
    c.access_page(10, 0); // colour 0, cold
    c.access_page(10, 4000); // same page: hit
    c.access_page(11, 0); // colour 1, cold
    c.access_page(12, 5); // colour 0: conflict with 10
    let s = c.stats();
    assert_eq!((s.hits, s.misses, s.conflicts), (1, 3, 1));
    c.reset_stats();
    c.access_page(12, 0);
    assert_eq!(c.stats().hits, 1, "reset_stats keeps the contents");
    c.flush();
    c.access_page(12, 0);
    assert_eq!(c.stats().misses, 1, "flush empties the cache");
    assert_eq!(c.stats().conflicts, 0);
}

#[test]
fn line_and_page_agree_on_whole_page_touches() {
    // Touching every line of a page in line mode is a page touch in page mode: same conflict
    // pattern (64× the counts).
    let pages = [3u64, 7, 3, 19, 35, 3, 7];
    let mut l = MemSideCache::new(16 * 4096, CacheMode::Line).unwrap();
    let mut p = MemSideCache::new(16 * 4096, CacheMode::PageColour).unwrap();
    for &pfn in &pages {
        p.access_page(pfn, 0);
        for off in (0..4096).step_by(64) {
            l.access_page(pfn, off);
        }
    }
    assert_eq!(l.stats().conflicts, 64 * p.stats().conflicts);
    assert_eq!(l.stats().hits, 64 * p.stats().hits);
}
