//! The process's readable or writable mappings from `/proc/self/maps`, read without
//! allocating: usable in the child of a `fork()` from a multi-threaded process, where another
//! thread may have held the allocator's lock at the fork.

/// One mapping: `[start, end)` and the first bytes of its name (`[stack]`, a path, or empty).
#[derive(Clone, Copy, Debug)]
pub struct Mapping {
    /// First address.
    pub start: usize,
    /// One past the last address.
    pub end: usize,
    /// The name's first bytes, NUL-padded.
    pub name: [u8; 40],
    /// Writable (`w`).
    pub writable: bool,
    /// Private (`p`; `s` is shared).
    pub private: bool,
}

impl Mapping {
    /// No mapping: to fill the arrays [`readable`] and [`writable`] write into.
    pub const EMPTY: Mapping = Mapping {
        start: 0,
        end: 0,
        name: [0; 40],
        writable: false,
        private: false,
    };

    /// The name as text (lossy, cut at 40 bytes).
    pub fn name(&self) -> &str {
        let n = self.name.iter().position(|&b| b == 0).unwrap_or(40);
        core::str::from_utf8(&self.name[..n]).unwrap_or("?")
    }
}

/// Reads `/proc/self/maps` into `text` and writes every readable and writable mapping (private
/// or shared; `[vvar]`, `[vdso]` and `[vsyscall]` left out) into `out`; returns how many.
/// Allocation-free.
pub fn writable(text: &mut [u8], out: &mut [Mapping]) -> usize {
    let all = readable(text, out);
    let mut n = 0;
    for i in 0..all {
        if out[i].writable {
            out[n] = out[i];
            n += 1;
        }
    }
    n
}

/// Reads `/proc/self/maps` into `text` and writes every readable mapping (`[vvar]`, `[vdso]`
/// and `[vsyscall]` left out) into `out`; returns how many. Allocation-free.
pub fn readable(text: &mut [u8], out: &mut [Mapping]) -> usize {
    // SAFETY: a NUL-terminated path; reads into a buffer we own, within its length.
    let len = unsafe {
        let fd = libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY);
        assert!(fd >= 0, "open /proc/self/maps");
        let mut len = 0usize;
        loop {
            let n = libc::read(fd, text[len..].as_mut_ptr().cast(), text.len() - len);
            if n <= 0 {
                break;
            }
            len += n as usize;
        }
        libc::close(fd);
        len
    };
    assert!(len < text.len(), "/proc/self/maps did not fit");
    let hex = |s: &[u8]| {
        s.iter().fold(0usize, |a, &c| {
            a * 16 + (c as char).to_digit(16).unwrap_or(0) as usize
        })
    };
    let mut n = 0;
    for line in text[..len].split(|&c| c == b'\n') {
        let mut fields = line.split(|&c| c == b' ').filter(|f| !f.is_empty());
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let name = fields.nth(3).unwrap_or(b"");
        if perms.len() < 4 || perms[0] != b'r' || name.starts_with(b"[v") {
            continue;
        }
        let Some(dash) = range.iter().position(|&c| c == b'-') else {
            continue;
        };
        assert!(n < out.len(), "too many mappings");
        let mut m = Mapping {
            start: hex(&range[..dash]),
            end: hex(&range[dash + 1..]),
            name: [0; 40],
            writable: perms[1] == b'w',
            private: perms[3] == b'p',
        };
        let k = name.len().min(40);
        m.name[..k].copy_from_slice(&name[..k]);
        out[n] = m;
        n += 1;
    }
    n
}

/// The resident memory (`Rss`, in kB) of the mapping that holds `addr`, from
/// `/proc/self/smaps`; `None` if no mapping holds it or the file cannot be read. Allocates:
/// for a test's own process, not a fork child.
pub fn rss_kib(addr: usize) -> Option<usize> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((lo, hi)) = range.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = (lo..hi).contains(&addr);
        } else if inside && let Some(v) = line.strip_prefix("Rss:") {
            return v.trim().trim_end_matches(" kB").trim().parse().ok();
        }
    }
    None
}
