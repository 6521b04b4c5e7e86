//! How `gza work` and everything it starts (agents, git, regenerations, the agents' own hooks)
//! share the CPU with the person's interactive sessions, whose hooks have budgets of
//! milliseconds (`work_priority`).
//!
//! Linux with autogroups (`kernel.sched_autogroup_enabled`, on in most desktop and server
//! kernels) schedules each session (each terminal, each `setsid`) as one group, and a group's
//! share does not depend on the nice values inside it: a `gza work` started from another
//! terminal, however nice, competes with the person's Claude Code session as an equal. So,
//! unless `work_priority` is `normal`:
//!
//! * `gza work` runs in a session of its own (from a terminal, the process the person started
//!   stays as a thin parent that relays signals and the exit status; see `cli/work.rs`), and
//!   lowers that session's autogroup (`/proc/self/autogroup`, which any process may make
//!   nicer): nice 10 for `background` (its group gets about a tenth of a core the person's
//!   work wants, and everything when the person is idle), 19 for `idle`.
//! * Its threads, and so every process it starts, take `SCHED_IDLE`: a task of the person's
//!   that wakes on a core running one of gza's preempts it at once. Without an autogroup to
//!   guarantee gza's share (autogroups off, or gza inside a cgroup), `background` takes
//!   `SCHED_BATCH` instead, since `SCHED_IDLE` alone would leave gza a fraction of a percent.
//! * Its nice value goes up by 10 as well, which orders it where autogroups do not apply.
//!
//! On a machine nobody else uses, none of this changes how fast gza work runs.

use std::io::Write;

use crate::config::WorkPriority;

/// How much `gza work` raises its own nice value (and so its children's).
pub const WORK_NICENESS: i32 = 10;

/// The autogroup nice value for a level (`None`: leave the autogroup alone).
pub fn autogroup_nice(level: WorkPriority) -> Option<i32> {
    match level {
        WorkPriority::Background => Some(10),
        WorkPriority::Idle => Some(19),
        WorkPriority::Normal => None,
    }
}

/// Whether the kernel schedules sessions as groups (autogroups on).
pub fn autogroups_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|v| v.trim() == "1")
}

/// Whether this process leads its session (so its autogroup holds only it and what it starts).
pub fn leads_session() -> bool {
    // SAFETY: getsid and getpid only read this process's ids.
    unsafe { libc::getsid(0) == libc::getpid() }
}

/// What [`lower`] did, for the log and for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    /// The autogroup's nice value now, when gza set it.
    pub autogroup: Option<i32>,
    /// `SCHED_IDLE`, `SCHED_BATCH`, or none.
    pub policy: Option<&'static str>,
}

/// Lower this process to `level`: the nice value, the scheduling policy of the calling thread
/// (threads and processes started afterwards inherit both) and, when this process leads its
/// session, the session's autogroup. Call it before starting any thread. Failures leave the
/// priority as it was: lowering is an aid, never a reason not to run.
pub fn lower(level: WorkPriority) -> Lowered {
    let mut done = Lowered {
        autogroup: None,
        policy: None,
    };
    let Some(nice) = autogroup_nice(level) else {
        return done;
    };
    // SAFETY: nice(2) on this process only; a failure (-1 with errno) leaves it as it was.
    unsafe {
        libc::nice(WORK_NICENESS);
    }
    if leads_session() && autogroups_enabled() && set_autogroup_nice(nice) {
        done.autogroup = Some(nice);
    }
    // With an autogroup holding gza's share, SCHED_IDLE only decides who runs first on a core;
    // without one it would also decide how much gza gets, which `background` must not starve.
    let (policy, name) = if done.autogroup.is_some() || level == WorkPriority::Idle {
        (libc::SCHED_IDLE, "SCHED_IDLE")
    } else {
        (libc::SCHED_BATCH, "SCHED_BATCH")
    };
    if set_policy(policy) {
        done.policy = Some(name);
    }
    done
}

/// Make the calling thread `SCHED_IDLE` (and the threads and processes it starts afterwards):
/// for work started inside a person's session that must never keep it waiting (the background
/// embedding job a hook starts). Returns whether it took.
pub fn idle_policy() -> bool {
    set_policy(libc::SCHED_IDLE)
}

/// Set the calling thread's scheduling policy (priority 0, as both policies require).
fn set_policy(policy: libc::c_int) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid parameter.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

/// Set this session's autogroup nice value. The kernel lets an unprivileged process change it
/// once per 100 ms machine-wide (EAGAIN otherwise), so a busy moment is waited out, for at
/// most half a second.
fn set_autogroup_nice(nice: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open("/proc/self/autogroup")
            .and_then(|mut f| f.write_all(nice.to_string().as_bytes()));
        match written {
            Ok(()) => return true,
            Err(e)
                if e.raw_os_error() == Some(libc::EAGAIN)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(_) => return false,
        }
    }
}

/// This process's autogroup nice value, from `/proc/self/autogroup` (`/autogroup-42 nice 10`).
pub fn autogroup_nice_now() -> Option<i32> {
    let text = std::fs::read_to_string("/proc/self/autogroup").ok()?;
    text.split_whitespace().last()?.parse().ok()
}

/// This thread's scheduling policy's name.
pub fn policy_now() -> &'static str {
    // SAFETY: sched_getscheduler on the calling thread.
    match unsafe { libc::sched_getscheduler(0) } {
        libc::SCHED_IDLE => "SCHED_IDLE",
        libc::SCHED_BATCH => "SCHED_BATCH",
        libc::SCHED_OTHER => "SCHED_OTHER",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_changes_nothing() {
        let before = (policy_now(), autogroup_nice_now());
        assert_eq!(
            lower(WorkPriority::Normal),
            Lowered {
                autogroup: None,
                policy: None
            }
        );
        assert_eq!((policy_now(), autogroup_nice_now()), before);
    }
}
