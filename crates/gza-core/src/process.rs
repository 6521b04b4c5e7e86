//! Child processes: finding a binary, process groups, liveness that a reused PID cannot fool,
//! signals. A leaf room: every other room may use it, it uses none of them.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Check that `program` can be started; the error names the binary and its config key.
pub fn check_binary(program: &str, config_key: &str) -> Result<()> {
    if program.is_empty() {
        return Err(Error::Usage(format!(
            "no agent command configured; set {config_key} in gza.yaml"
        )));
    }
    let found = if program.contains('/') {
        is_executable(Path::new(program))
    } else {
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(program))))
            .unwrap_or(false)
    };
    if found {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "agent binary `{program}` not found; install it or set {config_key} in gza.yaml"
        )))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Set once SIGINT or SIGTERM has asked gza to stop.
static STOP: std::sync::LazyLock<Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Catch SIGINT and SIGTERM so running agents can be stopped and their tasks recorded.
/// Agents run in their own process groups, so a terminal's Ctrl-C reaches only gza.
/// A second signal means "now": the first already asked every agent to stop, so gza exits at
/// once with 130.
pub fn install_stop_handler() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as the previous signal left it.
        let exit = signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&STOP));
        let remember = signal_hook::flag::register(signal, Arc::clone(&STOP));
        if let Err(e) = exit.and(remember) {
            // Only a signal number the OS forbids fails here; SIGINT and SIGTERM never do.
            eprintln!("warning: cannot catch signal {signal}: {e}");
        }
    }
}

/// True once gza has been asked to stop.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// This process's PID namespace (`pid:[4026531836]`), where the platform has one. Two processes
/// in the same namespace see each other's PIDs, so only then does "PID not found" mean "dead".
pub fn pid_namespace() -> Option<String> {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// This machine and its current boot (`/etc/machine-id` and the kernel's boot id): where a
/// PID recorded by a worker means something. Two machines, or one machine after a reboot,
/// never share it. Empty where the platform has neither.
pub fn machine() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let id = read("/etc/machine-id");
    let boot = read("/proc/sys/kernel/random/boot_id");
    if id.is_empty() && boot.is_empty() {
        String::new()
    } else {
        format!("{id}:{boot}")
    }
}

/// This machine's host name, as `gza ps` shows where a worker runs.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// This process's id.
pub fn own_pid() -> i64 {
    i64::from(std::process::id())
}

/// When a process started, in clock ticks since boot (field 22 of /proc/PID/stat);
/// `None` if there is no such process or it is a zombie.
pub fn start_ticks(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // `rest` starts at field 3; field 22 is the 20th from here.
    fields.nth(18)?.parse().ok()
}

/// True when process `pid` is alive and is the same process that started at `start`.
pub fn is_same_process_alive(pid: i64, start: Option<i64>) -> bool {
    match (start_ticks(pid), start) {
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Send `signal` to every process in group `pgid`. Returns false if the group no longer exists.
pub fn signal_group(pgid: i64, signal: libc::c_int) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill with a negative pid signals a process group; no memory is involved.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

/// True while any process of group `pgid` exists and is not a zombie. A zombie cannot run, and
/// one whose parent died waits for init to reap it: bubblewrap's PID-namespace init, orphaned when
/// bwrap exits, stayed a zombie in the agent's group for about 0.5 s on a VM whose init reaps
/// slowly, and every sandboxed task waited out the kill grace for it.
pub fn group_exists(pgid: i64) -> bool {
    signal_group(pgid, 0) && group_has_live_member(pgid)
}

fn group_has_live_member(pgid: i64) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .any(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some(close) = stat.rfind(')') else {
                return false;
            };
            // After the command name: state, ppid, pgrp.
            let mut fields = stat[close + 1..].split_whitespace();
            let state = fields.next().unwrap_or("Z");
            let pgrp = fields.nth(1).and_then(|f| f.parse::<i64>().ok());
            state != "Z" && state != "X" && pgrp == Some(pgid)
        })
}

/// End process group `pgid`: SIGTERM, then SIGKILL once `grace` has passed.
pub fn terminate_group(pgid: i64, grace: Duration) {
    if !signal_group(pgid, libc::SIGTERM) {
        return;
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if !group_exists(pgid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_group(pgid, libc::SIGKILL);
}

/// The environment variable that tags every process an agent starts, so that processes which
/// left the agent's process group (a new session, `setsid`, a detached child) can still be found.
pub const RUN_TAG_VAR: &str = "GZA_RUN";

/// Processes (other than this one) whose environment holds `GZA_RUN=<tag>`.
pub fn tagged_processes(tag: &str) -> Vec<i64> {
    let needle = format!("{RUN_TAG_VAR}={tag}\0").into_bytes();
    let me = own_pid();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_slice()))
        })
        .filter(|&pid| start_ticks(pid).is_some())
        .collect()
}

/// End every process tagged `tag`: SIGTERM, then SIGKILL once `grace` has passed.
/// Returns how many were found.
pub fn terminate_tagged(tag: &str, grace: Duration) -> usize {
    let pids = tagged_processes(tag);
    let signal = |pid: i64, sig: libc::c_int| {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill sends a signal; no memory is involved.
            unsafe { libc::kill(pid, sig) };
        }
    };
    for &pid in &pids {
        signal(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && !tagged_processes(tag).is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in tagged_processes(tag) {
        signal(pid, libc::SIGKILL);
    }
    pids.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_readable_and_stable() {
        let me = own_pid();
        let a = start_ticks(me).expect("own /proc/self/stat");
        assert_eq!(start_ticks(me), Some(a));
        assert!(is_same_process_alive(me, Some(a)));
        assert!(
            !is_same_process_alive(me, Some(a + 1)),
            "a different start time means a reused pid"
        );
    }

    #[test]
    fn a_tagged_process_in_its_own_session_is_found_and_ended() {
        let tag = format!("unit-{}", own_pid());
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "60"])
            .env(RUN_TAG_VAR, &tag)
            .spawn()
            .unwrap();
        let pid = i64::from(child.id());
        let deadline = Instant::now() + Duration::from_secs(2);
        // Wait until setsid has exec'd sleep: a process in the middle of exec shows no
        // environment for a moment.
        let is_sleep = || {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        };
        while !(is_sleep() && tagged_processes(&tag) == vec![pid]) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(tagged_processes(&tag), vec![pid]);
        assert_eq!(terminate_tagged(&tag, Duration::from_secs(1)), 1);
        child.wait().unwrap();
        assert!(tagged_processes(&tag).is_empty());
    }

    #[test]
    fn terminating_a_group_ends_background_children_too() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 60 & sleep 60 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = i64::from(child.id());
        std::thread::sleep(Duration::from_millis(100));
        assert!(group_exists(pgid));
        terminate_group(pgid, Duration::from_secs(2));
        child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        while group_exists(pgid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!group_exists(pgid), "no process of the group is left");
    }
}
