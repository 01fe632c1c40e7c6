/*
 * bcryptprimitives.dll for wine prefixes whose wine has none (wine < 9, Debian 12's wine 8).
 *
 * Rust's std on Windows (and getrandom) takes its randomness from `ProcessPrng`, exported by
 * bcryptprimitives.dll since Windows 10. This library exports it on top of
 * `SystemFunction036` (`RtlGenRandom`, advapi32), which every wine has. It serves the
 * tests that `cargo xtask ci --only windows-wine` runs; nothing ships it.
 *
 * ProcessPrng: https://learn.microsoft.com/en-us/windows/win32/seccng/processprng
 * RtlGenRandom: https://learn.microsoft.com/en-us/windows/win32/api/ntsecapi/nf-ntsecapi-rtlgenrandom
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Fills `data` with `len` random bytes; always TRUE, as documented (a failure terminates). */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x80000000u ? 0x80000000u : (ULONG)len;
        if (!SystemFunction036(data, n)) {
            ExitProcess(1);
        }
        data += n;
        len -= n;
    }
    return TRUE;
}
