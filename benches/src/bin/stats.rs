//! Raw output of any scalrand generator, for statistical batteries:
//!
//! ```text
//! stats --list
//! stats GEN [--bytes N] [--seed S]        raw bytes to stdout (N = 0: until the reader stops)
//! stats GEN --smoke [--bytes N]           the quick z-scores instead
//! ```
//!
//! `cargo xtask stats GEN --dieharder` pipes it into `dieharder -g 200 -a`.

use std::io::Write;

use scalrand_benches::{sources, stats};

fn usage() -> ! {
    eprintln!("usage: stats --list | stats GEN [--bytes N] [--seed S] [--smoke]");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut gen_name = None;
    let mut bytes: u64 = 0;
    let mut seed: u64 = 0x5ca1_ab1e;
    let mut smoke = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--list" => {
                for (name, what, _) in sources::all() {
                    println!("{name:<24} {what}");
                }
                return;
            }
            "--bytes" => {
                bytes = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--seed" => {
                seed = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--smoke" => smoke = true,
            s if !s.starts_with('-') && gen_name.is_none() => gen_name = Some(s.to_owned()),
            _ => usage(),
        }
    }
    let name = gen_name.unwrap_or_else(|| usage());
    let Some(mut source) = sources::by_name(&name, seed) else {
        eprintln!("unknown generator {name:?}; `stats --list` lists them");
        std::process::exit(2)
    };
    if smoke {
        let n = if bytes == 0 { 8 << 20 } else { bytes as usize };
        let mut buf = vec![0u8; n];
        source(&mut buf);
        for (test, z) in stats::scores(&buf) {
            println!("{name}: {test:<20} z = {z:+.3}");
        }
        match stats::smoke(&buf) {
            Ok(()) => println!("{name}: PASS (|z| <= {})", stats::Z_LIMIT),
            Err(e) => {
                println!("{name}: FAIL {e}");
                std::process::exit(1)
            }
        }
        return;
    }
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 1 << 16];
    let mut left = bytes;
    loop {
        let n = if bytes == 0 {
            buf.len()
        } else {
            (left as usize).min(buf.len())
        };
        if n == 0 {
            break;
        }
        source(&mut buf[..n]);
        if out.write_all(&buf[..n]).is_err() {
            // The reader (dieharder) closed the pipe: done.
            break;
        }
        left = left.saturating_sub(n as u64);
    }
    let _ = out.flush();
}
