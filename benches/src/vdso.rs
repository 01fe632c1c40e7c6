//! The kernel's own user-space CSPRNG, called directly: the vDSO `getrandom()` (Jason A.
//! Donenfeld's series, Linux 6.11). glibc ≥ 2.41 routes `getrandom(3)` through it; older glibc
//! (2.36 on Debian 12) does not, so the harness finds it itself:
//! `dlopen("linux-vdso.so.1", RTLD_NOLOAD)` + `dlsym("__vdso_getrandom")`, asks for the opaque
//! state's size and mapping flags (a call with a null buffer and `opaque_len = ~0`), and maps
//! one state per thread with them (the kernel's `MAP_DROPPABLE`, wipe-on-fork memory).

use std::ffi::c_void;

/// `ssize_t vgetrandom(void *buf, size_t len, unsigned flags, void *state, size_t state_len)`.
type VGetrandom = unsafe extern "C" fn(*mut c_void, usize, u32, *mut c_void, usize) -> isize;

/// What the params query returns (`struct vgetrandom_opaque_params`, include/uapi/linux/random.h).
#[repr(C)]
#[derive(Default)]
struct Params {
    size_of_opaque_state: u32,
    mmap_prot: u32,
    mmap_flags: u32,
    reserved: [u32; 13],
}

/// The vDSO function and its state parameters.
pub struct Vdso {
    f: VGetrandom,
    params: Params,
}

impl std::fmt::Debug for Vdso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vdso")
            .field("state_size", &self.params.size_of_opaque_state)
            .finish()
    }
}

impl Vdso {
    /// Finds `__vdso_getrandom`; an error names what is missing (an older kernel).
    pub fn find() -> Result<Self, String> {
        // SAFETY: RTLD_NOLOAD only looks up an already-mapped object; the name is a C string.
        let h = unsafe {
            libc::dlopen(
                c"linux-vdso.so.1".as_ptr(),
                libc::RTLD_NOLOAD | libc::RTLD_LAZY,
            )
        };
        if h.is_null() {
            return Err("no linux-vdso.so.1 in this process".into());
        }
        // SAFETY: `h` is a valid handle; the name is a C string.
        let sym = unsafe { libc::dlsym(h, c"__vdso_getrandom".as_ptr()) };
        if sym.is_null() {
            return Err("this kernel's vDSO has no __vdso_getrandom (Linux < 6.11)".into());
        }
        // SAFETY: the vDSO exports `__vdso_getrandom` with the signature of `VGetrandom`.
        let f: VGetrandom = unsafe { std::mem::transmute::<*mut c_void, VGetrandom>(sym) };
        let mut params = Params::default();
        // SAFETY: the documented params query: null buffer, zero length, `opaque_len = ~0`,
        // `state` pointing at a writable `Params`.
        let rc = unsafe {
            f(
                std::ptr::null_mut(),
                0,
                0,
                (&raw mut params).cast(),
                usize::MAX,
            )
        };
        if rc != 0 || params.size_of_opaque_state == 0 {
            return Err(format!("vDSO getrandom params query failed ({rc})"));
        }
        Ok(Self { f, params })
    }

    /// One thread's state, mapped as the kernel asks.
    pub fn state(&self) -> Result<State<'_>, String> {
        let len = self.params.size_of_opaque_state as usize;
        // SAFETY: an anonymous mapping with the protection and flags the kernel gave.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                self.params.mmap_prot as i32,
                self.params.mmap_flags as i32,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err("mmap of the vDSO getrandom state failed".into());
        }
        Ok(State {
            vdso: self,
            state: p,
            len,
        })
    }
}

/// One thread's vDSO getrandom state; unmapped on drop.
pub struct State<'a> {
    vdso: &'a Vdso,
    state: *mut c_void,
    len: usize,
}

impl std::fmt::Debug for State<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("State { .. }")
    }
}

impl State<'_> {
    /// Fills `buf` (loops over short reads; the vDSO falls back to the system call itself).
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut off = 0;
        while off < buf.len() {
            // SAFETY: `buf[off..]` is writable; `state` is this thread's mapped state of `len`
            // bytes, used by one thread at a time (`&mut self`).
            let n = unsafe {
                (self.vdso.f)(
                    buf[off..].as_mut_ptr().cast(),
                    buf.len() - off,
                    0,
                    self.state,
                    self.len,
                )
            };
            if n <= 0 {
                return;
            }
            off += n as usize;
        }
    }
}

impl Drop for State<'_> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `Vdso::state`, no longer used.
        unsafe { libc::munmap(self.state, self.len) };
    }
}
