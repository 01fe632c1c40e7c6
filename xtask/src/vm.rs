//! `cargo xtask vm`: boots emulated many-CPU, multi-node x86_64 machines and runs release test
//! binaries inside them.
//!
//! Each machine of [`MACHINES`] is QEMU system emulation with TCG (`-accel tcg,thread=multi
//! -cpu max`: a full kernel, so sysfs, rseq, wipe-on-fork memory, CPU hotplug and affinity are
//! the real ones), its NUMA layout given with `-numa node,cpus=…,memdev=…` (QEMU's
//! "System Emulation → Invocation" manual), booting the distribution's kernel from `/boot`
//! with a busybox initramfs that holds the test binaries and the shared libraries `ldd` names.
//! The guest's `/init` runs [`VM_TESTS`] (and on one machine the scaling harness at 16
//! threads, [`VM_SCALING`]) and prints a closing line with its status; the layout
//! QEMU was given reaches the tests as `SCALRAND_GUEST_NODES` (kernel command-line words of the
//! form `NAME=value` that the kernel does not know become `/init`'s environment, see the
//! kernel's Documentation/admin-guide/kernel-parameters.rst).
//!
//! `--break-detection` hands the pools a wrong topology inside the guest and succeeds only if
//! the routing checks then fail: the check of the checks.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::artifacts::{TestBinary, build_executables, build_tests};
use crate::cmd::{Cmd, cargo};
use crate::cmd::{Result, project_root};
use crate::config::{
    CAMPAIGN_VAR, MACHINES, Machine, SCALING_HARNESS, VM_BUSYBOX, VM_MEMORY_MIB, VM_SCALING,
    VM_TESTS, VM_TIMEOUT_SECS,
};
use crate::flags;

/// The line `/init` prints last; the status follows it.
const DONE: &str = "scalrand-vm: done, status ";

/// The check of the checks that CI's `numa-vm` step runs inside one machine's normal boot,
/// after its tests: `numa_guest`'s routing test once more with the pools handed a wrong
/// topology ([`flags::Broken`]), which must fail and name a misrouted CPU.
pub const VM_CHECK_OF_CHECKS: (&str, flags::Broken) = ("four-nodes", flags::Broken::Shuffle);

/// The line a failed test binary leaves.
const FAILED: &str = "scalrand-vm: FAILED";

/// Console lines kept from each panic (its message and what follows) for the error.
const PANIC_LINES: usize = 10;

/// The line the check of the checks ([`VM_CHECK_OF_CHECKS`]) leaves when the routing test
/// failed as it must.
const CAUGHT: &str = "scalrand-vm: caught broken detection";

/// The scaling harness's program (a `[[bin]]` of `scalrand-benches`).
const SCALING: &str = "scaling";

/// Programs the guest's `/init` calls, as busybox applets.
const APPLETS: &[&str] = &["sh", "mount", "poweroff", "env", "echo", "cat", "grep"];

/// `cargo xtask vm`.
pub fn run(flags: &flags::Vm) -> Result {
    let machines: Vec<&Machine> = if flags.machine.is_empty() {
        MACHINES.iter().collect()
    } else {
        MACHINES
            .iter()
            .filter(|m| flags.machine.iter().any(|n| n == m.name))
            .collect()
    };
    if flags.list {
        for m in MACHINES {
            println!("{:<12} {}", m.name, m.about);
        }
        return Ok(());
    }
    let campaign = crate::config::campaign()?;
    let kernel = kernel()?;
    let binaries = build()?;
    // Every machine boots, whatever the one before it showed; the errors come together.
    let mut errors = Vec::new();
    for m in machines {
        let booted = initramfs(m, &binaries, flags.break_detection.is_some())
            .and_then(|initrd| boot(m, &kernel, &initrd, campaign, flags.break_detection));
        if let Err(e) = booted {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The newest `/boot/vmlinuz-*` (Debian's `linux-image-amd64`).
fn kernel() -> Result<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
        .map_err(|e| format!("/boot: {e} (install linux-image-amd64)"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("vmlinuz-"))
        })
        .collect();
    found.sort();
    found
        .pop()
        .ok_or_else(|| "no /boot/vmlinuz-*: install linux-image-amd64".to_owned())
}

/// Builds the test binaries of [`VM_TESTS`] in the workspace's release build (the pool with
/// `hwloc`, as the `backends` step's default build has it, so the two share one build) and
/// returns them.
fn build() -> Result<Vec<TestBinary>> {
    let mut c = cargo("vm build", ["test", "--release", "--no-run"])
        .args(["--features", "scalrand-pool/hwloc"]);
    let mut packages: Vec<&str> = VM_TESTS.iter().map(|t| t.0).collect();
    packages.sort_unstable();
    packages.dedup();
    for p in packages {
        c = c.args(["-p", p]);
    }
    let mut targets: Vec<&str> = VM_TESTS.iter().map(|t| t.1).collect();
    targets.sort_unstable();
    targets.dedup();
    for t in &targets {
        c = c.args(["--test", t]);
    }
    let mut found: Vec<TestBinary> = build_tests(c)?
        .into_iter()
        .filter(|b| targets.contains(&b.target.as_str()))
        .collect();
    if let Some(t) = targets
        .iter()
        .find(|t| !found.iter().any(|b| b.target == **t))
    {
        return Err(format!("vm build: cargo built no test binary {t}"));
    }
    let scaling = build_executables(cargo("vm build scaling", ["build"]).args(SCALING_HARNESS))?
        .into_iter()
        .find(|b| b.target == SCALING && !b.test)
        .ok_or_else(|| format!("vm build: cargo built no {SCALING} program"))?;
    found.push(scaling);
    Ok(found)
}

/// Machine `m`'s `/init`: mounts, its tests (or, breaking detection, the routing test alone),
/// the closing line, power-off.
fn init_script(m: &Machine, binaries: &[TestBinary], broken: bool) -> String {
    let mut s = String::from(
        "#!/bin/sh\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sysfs /sys\n\
         mount -t devtmpfs devtmpfs /dev\n\
         cd /t\n\
         status=0\n\
         run() {\n\
         \x20 echo \"scalrand-vm: run $*\"\n\
         \x20 env \"$@\" || { echo \"scalrand-vm: FAILED $*\"; status=1; }\n\
         }\n\
         echo \"scalrand-vm: nodes $SCALRAND_GUEST_NODES, online CPUs $(cat /sys/devices/system/cpu/online)\"\n",
    );
    for (_, target, args, env, on) in VM_TESTS {
        if (broken && *target != "numa_guest") || !(on.is_empty() || *on == m.name) {
            continue;
        }
        debug_assert!(binaries.iter().any(|b| b.target == *target));
        let filter = if broken {
            // The routing checks, without the detection check that would fail first.
            " every_cpu"
        } else {
            ""
        };
        s.push_str(&format!("run {env} ./{target} {args}{filter}\n"));
        if broken {
            break;
        }
    }
    if !broken && VM_SCALING.0 == m.name {
        s.push_str(&format!("run ./{SCALING} {}\n", VM_SCALING.1));
    }
    if !broken && VM_CHECK_OF_CHECKS.0 == m.name {
        // The routing test with a wrong topology: it must fail, naming a misrouted CPU.
        let b = VM_CHECK_OF_CHECKS.1.name();
        s.push_str(&format!(
            "echo \"scalrand-vm: run SCALRAND_GUEST_BREAK={b} ./numa_guest (must fail)\"\n\
             if env SCALRAND_GUEST_BREAK={b} ./numa_guest --ignored --test-threads=1 every_cpu \
             > /tmp/broken 2>&1; then\n\
             \x20 echo \"{FAILED}: with detection broken ({b}) the routing checks passed\"; status=1\n\
             elif grep misrouted /tmp/broken; then\n\
             \x20 echo \"{CAUGHT} ({b})\"\n\
             else\n\
             \x20 cat /tmp/broken\n\
             \x20 echo \"{FAILED}: with detection broken ({b}) no misrouted CPU was named\"; status=1\n\
             fi\n"
        ));
    }
    s.push_str(&format!("echo \"{DONE}$status\"\npoweroff -f\n"));
    s
}

/// Machine `m`'s newc initramfs under `target/vm/`: busybox, its `/init`, the test binaries
/// under `/t` and every shared library they load, at the paths `ldd` gives.
fn initramfs(m: &Machine, binaries: &[TestBinary], broken: bool) -> Result<PathBuf> {
    let base = project_root().join("target/vm");
    let root = base.join("root");
    let io = |what: &Path| {
        let what = what.display().to_string();
        move |e: std::io::Error| format!("{what}: {e}")
    };
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(io(&root))?;
    }
    for d in ["bin", "t", "proc", "sys", "dev", "tmp"] {
        std::fs::create_dir_all(root.join(d)).map_err(io(&root.join(d)))?;
    }
    let busybox = Path::new(VM_BUSYBOX);
    if !busybox.exists() {
        return Err(format!("{VM_BUSYBOX} missing: install busybox-static"));
    }
    std::fs::copy(busybox, root.join("bin/busybox")).map_err(io(busybox))?;
    for a in APPLETS {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(a))
            .map_err(io(&root.join("bin").join(a)))?;
    }
    let mut libs: Vec<PathBuf> = Vec::new();
    for b in binaries {
        std::fs::copy(&b.exe, root.join("t").join(&b.target)).map_err(io(&b.exe))?;
        let out = Cmd::new("vm ldd", "ldd").arg(&b.exe).output()?;
        if !out.status.success() {
            return Err(format!("ldd {}: {}", b.exe.display(), out.status));
        }
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or
            // `/lib64/ld-linux-x86-64.so.2 (0x…)`; the vDSO has no file.
            let path = line
                .split_once("=>")
                .map_or(line, |(_, p)| p)
                .split_whitespace()
                .next()
                .filter(|p| p.starts_with('/'));
            if let Some(p) = path {
                libs.push(PathBuf::from(p));
            }
        }
    }
    libs.sort();
    libs.dedup();
    for lib in &libs {
        let to = root.join(lib.strip_prefix("/").unwrap_or(lib));
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        // Follow the link: the guest gets the library's bytes under the name the binary asks.
        std::fs::copy(lib, &to).map_err(io(lib))?;
    }
    let init = root.join("init");
    std::fs::write(&init, init_script(m, binaries, broken)).map_err(io(&init))?;
    std::fs::set_permissions(&init, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(io(&init))?;
    let cpio = base.join(format!("{}.cpio", m.name));
    // `find . | cpio -o -H newc`, from the root: the archive names start at `.`.
    let list = Cmd::new("vm initramfs", "find")
        .arg(".")
        .current_dir(&root)
        .spawn_piped()?;
    let file = std::fs::File::create(&cpio).map_err(io(&cpio))?;
    let stdin = list
        .stdout
        .ok_or_else(|| "vm initramfs: no pipe from find".to_owned())?;
    Cmd::new("vm initramfs", "cpio")
        .args(["-o", "-H", "newc", "--quiet"])
        .current_dir(&root)
        .stdin(stdin)
        .stdio(file, std::process::Stdio::inherit())
        .run()?;
    Ok(cpio)
}

/// QEMU's arguments for machine `m`, its tests' campaigns of size `campaign`.
fn qemu_args(
    m: &Machine,
    kernel: &Path,
    initrd: &Path,
    campaign: &str,
    broken: Option<flags::Broken>,
) -> Vec<String> {
    let mut a: Vec<String> = [
        "-accel",
        "tcg,thread=multi",
        "-cpu",
        "max",
        "-smp",
        m.smp,
        "-m",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    a.push(format!("{VM_MEMORY_MIB}M"));
    let share = VM_MEMORY_MIB / m.nodes.len();
    for (i, cpus) in m.nodes.iter().enumerate() {
        a.push("-object".into());
        a.push(format!("memory-backend-ram,id=m{i},size={share}M"));
        a.push("-numa".into());
        if cpus.is_empty() {
            a.push(format!("node,nodeid={i},memdev=m{i}"));
        } else {
            a.push(format!("node,cpus={cpus},nodeid={i},memdev=m{i}"));
        }
    }
    let mut append = format!(
        "console=ttyS0 panic=-1 quiet {} SCALRAND_GUEST_NODES={} {CAMPAIGN_VAR}={campaign}",
        m.kernel_args,
        m.nodes.join("/")
    );
    if let Some(b) = broken {
        append.push_str(&format!(" SCALRAND_GUEST_BREAK={}", b.name()));
    }
    a.push("-kernel".into());
    a.push(kernel.display().to_string());
    a.push("-initrd".into());
    a.push(initrd.display().to_string());
    a.push("-append".into());
    a.push(append);
    a.extend(
        [
            "-display",
            "none",
            "-serial",
            "stdio",
            "-no-reboot",
            "-nodefaults",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    a
}

/// Boots `m`, streams its console, and checks the closing line: status 0, or with
/// `broken`, a failure whose message names misrouted CPUs.
fn boot(
    m: &Machine,
    kernel: &Path,
    initrd: &Path,
    campaign: &str,
    broken: Option<flags::Broken>,
) -> Result {
    let label = format!("vm {}", m.name);
    eprintln!("\n==> [{label}] {}", m.about);
    let t = std::time::Instant::now();
    // `timeout` stops a guest that hangs; QEMU's own exit is the guest's power-off.
    let child = Cmd::new(&label, "timeout")
        .args([
            "-k",
            "10",
            &VM_TIMEOUT_SECS.to_string(),
            "qemu-system-x86_64",
        ])
        .args(qemu_args(m, kernel, initrd, campaign, broken))
        .stdin(std::process::Stdio::null())
        .spawn_piped()?;
    let mut child = child;
    let out = child
        .stdout
        .take()
        .ok_or_else(|| format!("[{label}] no console pipe"))?;
    let mut status = None;
    let mut misrouted = Vec::new();
    let mut failed = Vec::new();
    // Each panic's message and the lines after it, so that the error names the cause even
    // where only the end of a long log is kept (CI shows its tail).
    let mut panics: Vec<String> = Vec::new();
    let mut after_panic = 0;
    let mut caught = false;
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| format!("[{label}] console: {e}"))?;
        eprintln!("[{}] {line}", m.name);
        if let Some(s) = line.trim().strip_prefix(DONE) {
            status = Some(s.trim().to_owned());
        }
        if line.contains("panicked at") {
            after_panic = PANIC_LINES;
        }
        if after_panic > 0 && panics.len() < 8 * PANIC_LINES {
            panics.push(line.clone());
            after_panic -= 1;
        }
        if line.contains(FAILED) {
            failed.push(line.clone());
        }
        if line.contains("misrouted") {
            misrouted.push(line.clone());
        }
        caught |= line.contains(CAUGHT);
    }
    let exit = child
        .wait()
        .map_err(|e| format!("[{label}] waiting for qemu: {e}"))?;
    eprintln!("<== [{label}] {:.1}s", t.elapsed().as_secs_f64());
    match (status.as_deref(), broken) {
        (None, _) => Err(format!(
            "[{label}] the guest did not finish (qemu: {exit}; timeout {VM_TIMEOUT_SECS}s)"
        )),
        (Some("0"), None) if VM_CHECK_OF_CHECKS.0 == m.name && !caught => Err(format!(
            "[{label}] the check of the checks (detection broken: {}) did not run",
            VM_CHECK_OF_CHECKS.1.name()
        )),
        (Some("0"), None) => Ok(()),
        (Some(_), None) => Err(format!(
            "[{label}] failed in the guest:\n{}\n{}",
            panics.join("\n"),
            failed.join("\n")
        )),
        (Some("0"), Some(b)) => Err(format!(
            "[{label}] with detection broken ({}), the routing checks still passed",
            b.name()
        )),
        (Some(_), Some(b)) if !misrouted.is_empty() => {
            eprintln!(
                "[{label}] detection broken ({}): the routing checks failed, as they must:\n{}",
                b.name(),
                misrouted.join("\n")
            );
            Ok(())
        }
        (Some(_), Some(b)) => Err(format!(
            "[{label}] with detection broken ({}), the guest failed without naming a \
             misrouted CPU:\n{}",
            b.name(),
            failed.join("\n")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_gets_every_node_and_the_layout() {
        let m = &MACHINES[1];
        let a = qemu_args(m, Path::new("/boot/k"), Path::new("/i"), "sample", None);
        let numa: Vec<&String> = a
            .iter()
            .zip(a.iter().skip(1))
            .filter(|(k, _)| *k == "-numa")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(numa.len(), m.nodes.len());
        assert_eq!(numa[3], "node,nodeid=3,memdev=m3", "a node of memory only");
        let append = &a[a.iter().position(|s| s == "-append").unwrap() + 1];
        assert!(
            append.contains("SCALRAND_GUEST_NODES=0-1/2-7/8-15/"),
            "{append}"
        );
        assert!(append.contains("maxcpus=12"), "{append}");
        assert!(append.contains(" SCALRAND_CAMPAIGN=sample"), "{append}");
    }

    #[test]
    fn the_campaign_is_a_sample_unless_full_is_asked() {
        use std::env::VarError;
        assert_eq!(
            crate::config::campaign_from(Err(VarError::NotPresent)),
            Ok("sample")
        );
        assert_eq!(
            crate::config::campaign_from(Ok(String::new())),
            Ok("sample")
        );
        assert_eq!(
            crate::config::campaign_from(Ok("sample".into())),
            Ok("sample")
        );
        assert_eq!(crate::config::campaign_from(Ok("full".into())), Ok("full"));
        let bad = crate::config::campaign_from(Ok("al l".into())).unwrap_err();
        assert!(
            bad.contains("SCALRAND_CAMPAIGN") && bad.contains("full"),
            "{bad}"
        );
        let odd =
            crate::config::campaign_from(Err(VarError::NotUnicode("\u{ff}".into()))).unwrap_err();
        assert!(odd.contains("SCALRAND_CAMPAIGN"), "{odd}");
    }

    #[test]
    fn init_runs_every_test_or_only_the_routing_check() {
        let bins: Vec<TestBinary> = VM_TESTS
            .iter()
            .map(|t| TestBinary {
                package: t.0.to_owned(),
                target: t.1.to_owned(),
                test: true,
                exe: PathBuf::new(),
                dir: PathBuf::new(),
            })
            .collect();
        let mut runs = 0;
        for m in MACHINES {
            let all = init_script(m, &bins, false);
            assert!(all.contains("GLIBC_TUNABLES=glibc.pthread.rseq=0"));
            assert!(all.contains("./numa_guest --ignored --test-threads=1 --nocapture\n"));
            runs += all.matches("\nrun ").count();
            assert_eq!(
                all.contains("SCALRAND_GUEST_BREAK=shuffle ./numa_guest --ignored"),
                m.name == VM_CHECK_OF_CHECKS.0,
                "the check of the checks runs on one machine"
            );
        }
        let everywhere = VM_TESTS.iter().filter(|t| t.4.is_empty()).count();
        assert_eq!(
            runs,
            VM_TESTS.len() + everywhere * (MACHINES.len() - 1) + 1,
            "each test on its machine, or on every machine"
        );
        let broken = init_script(&MACHINES[0], &bins, true);
        assert_eq!(broken.matches("\nrun ").count(), 1);
        assert!(broken.contains("./numa_guest --ignored --test-threads=1 --nocapture every_cpu"));
    }
}
