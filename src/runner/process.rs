//! Child processes: process groups, liveness that a reused PID cannot fool, signals.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The signal that asked gza to stop (SIGINT or SIGTERM), or 0.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember_signal(sig: libc::c_int) {
    // A second signal means "now": the first already asked every agent to stop.
    if STOP_SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Catch SIGINT and SIGTERM so running agents can be stopped and their tasks recorded.
/// Agents run in their own process groups, so a terminal's Ctrl-C reaches only gza.
/// A second signal exits at once.
pub fn install_stop_handler() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = remember_signal as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// True once gza has been asked to stop.
pub fn stop_requested() -> bool {
    STOP_SIGNAL.load(Ordering::SeqCst) != 0
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

/// True while any process of group `pgid` exists.
pub fn group_exists(pgid: i64) -> bool {
    signal_group(pgid, 0)
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
