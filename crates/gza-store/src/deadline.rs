//! A deadline for each statement on a PostgreSQL connection that is already open.
//!
//! The connection's own timeouts do not cover a peer that acknowledges and never answers: a
//! server stopped (SIGSTOP, a hung host whose kernel still answers TCP), a proxy whose far side
//! is gone. The kernel acknowledges what gza sends, so neither keepalives nor
//! `tcp_user_timeout` fire, and the `postgres` client (which offers no timeout of its own)
//! waits forever: every command, and the hooks' background job with its lock, hung.
//!
//! So each statement is armed here before it is sent and disarmed when it returns. A watchdog
//! thread shuts the connection's socket down when a deadline passes (`shutdown(2)`, which the
//! blocked client sees as the connection closed), and the statement fails with
//! [`crate::DbError::Silent`]; the connection is then replaced by the next statement, as a lost
//! one is. The socket is found when the connection opens ([`opened_socket`]): the socket the
//! process gained that leads to the server's port.
//!
//! What legitimately runs long is exempt by choice ([`crate::Db::without_deadline`]):
//! migrations (they run on the connection directly, never through here) and `gza db copy`.
//! `GZA_STATEMENT_SECONDS` sets the deadline (default 30 s; 0 has none).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A connection's socket: its descriptor, and the socket's inode to tell it from a descriptor
/// number reused after the connection closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Socket {
    fd: i32,
    inode: u64,
}

/// How long one statement may wait for an answer: `GZA_STATEMENT_SECONDS`, else 30 s; `None`
/// (0) never gives up. Ordinary statements take milliseconds; a lock another writer holds is
/// given up on before this (`lock_timeout`, 10 s).
pub fn statement_deadline() -> Option<Duration> {
    let secs = std::env::var("GZA_STATEMENT_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(30.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The process's sockets: descriptor and inode.
fn sockets() -> Vec<Socket> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let fd = e.file_name().to_str()?.parse().ok()?;
        let inode = socket_inode(fd)?;
        Some(Socket { fd, inode })
    })
    .collect()
}

/// The inode of the socket open at `fd`, if a socket is.
fn socket_inode(fd: i32) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    link.to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The port at the other end of TCP socket `fd`.
fn peer_port(fd: i32) -> Option<u16> {
    // SAFETY: getpeername writes at most `len` bytes into the storage given.
    unsafe {
        let mut addr: libc::sockaddr_storage = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        if libc::getpeername(fd, (&raw mut addr).cast(), &mut len) != 0 {
            return None;
        }
        match i32::from(addr.ss_family) {
            libc::AF_INET => {
                let a: &libc::sockaddr_in = &*(&raw const addr).cast();
                Some(u16::from_be(a.sin_port))
            }
            libc::AF_INET6 => {
                let a: &libc::sockaddr_in6 = &*(&raw const addr).cast();
                Some(u16::from_be(a.sin6_port))
            }
            _ => None,
        }
    }
}

/// The sockets open now, to find a connection's among those open after it ([`opened_socket`]).
pub(crate) fn before_connecting() -> Vec<Socket> {
    sockets()
}

/// The socket of the connection just opened to `port` (TCP) or through a socket file: the one
/// socket the process has now and did not have `before` (among several, the one whose peer is
/// the port). `None` when that cannot be told (another thread opened sockets meanwhile): that
/// connection's statements then have no deadline.
pub(crate) fn opened_socket(before: &[Socket], port: u16, tcp: bool) -> Option<Socket> {
    let new: Vec<Socket> = sockets()
        .into_iter()
        .filter(|s| !before.contains(s))
        .collect();
    match new.as_slice() {
        [one] => Some(*one),
        _ if tcp => {
            let to_port: Vec<Socket> = new
                .into_iter()
                .filter(|s| peer_port(s.fd) == Some(port))
                .collect();
            match to_port.as_slice() {
                [one] => Some(*one),
                _ => None,
            }
        }
        _ => None,
    }
}

struct Armed {
    until: Instant,
    socket: Socket,
    fired: Arc<AtomicBool>,
}

#[derive(Default)]
struct Watchdog {
    next: u64,
    armed: HashMap<u64, Armed>,
    running: bool,
}

fn watchdog() -> &'static (Mutex<Watchdog>, Condvar) {
    static WATCHDOG: OnceLock<(Mutex<Watchdog>, Condvar)> = OnceLock::new();
    WATCHDOG.get_or_init(|| (Mutex::new(Watchdog::default()), Condvar::new()))
}

/// A statement armed with a deadline; disarmed by [`Guard::disarm`] (or when dropped).
pub(crate) struct Guard {
    id: u64,
    fired: Arc<AtomicBool>,
}

impl Guard {
    /// Disarm; whether the deadline passed first (the socket was shut down).
    pub(crate) fn disarm(self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let (lock, _) = watchdog();
        if let Ok(mut w) = lock.lock() {
            w.armed.remove(&self.id);
        }
    }
}

/// Arm a statement on `socket` that must be answered within `within`.
pub(crate) fn arm(socket: Socket, within: Duration) -> Guard {
    let (lock, wake) = watchdog();
    let fired = Arc::new(AtomicBool::new(false));
    let mut w = lock.lock().unwrap_or_else(|e| e.into_inner());
    w.next += 1;
    let id = w.next;
    w.armed.insert(
        id,
        Armed {
            until: Instant::now() + within,
            socket,
            fired: fired.clone(),
        },
    );
    if !w.running {
        let started = std::thread::Builder::new()
            .name("gza-pg-deadline".into())
            .spawn(watch);
        w.running = started.is_ok();
    }
    drop(w);
    wake.notify_one();
    Guard { id, fired }
}

/// The watchdog: sleeps until the earliest deadline, shuts down the socket of each statement
/// past its own.
fn watch() {
    let (lock, wake) = watchdog();
    let mut w = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        let mut earliest: Option<Instant> = None;
        let mut past = Vec::new();
        for (id, armed) in &w.armed {
            if armed.until <= now {
                past.push(*id);
            } else {
                earliest = Some(earliest.map_or(armed.until, |e| e.min(armed.until)));
            }
        }
        for id in past {
            let armed = w.armed.remove(&id).expect("listed");
            // Said before the socket goes: the statement, woken by its shutdown, must find it.
            armed.fired.store(true, Ordering::SeqCst);
            // Only the connection's own socket: its descriptor may have been closed and reused.
            if socket_inode(armed.socket.fd) == Some(armed.socket.inode) {
                // SAFETY: shutdown on a descriptor that is this connection's socket (checked
                // just above); the client still owns it and closes it.
                unsafe {
                    libc::shutdown(armed.socket.fd, libc::SHUT_RDWR);
                }
            }
        }
        w = match earliest {
            Some(until) => {
                wake.wait_timeout(w, until.saturating_duration_since(now))
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => wake.wait(w).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_past_its_deadline_has_its_socket_shut_down_and_says_so() {
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let before = before_connecting();
        let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let socket = opened_socket(&before, port, true).expect("the new socket is found");
        let guard = arm(socket, Duration::from_millis(200));
        let started = Instant::now();
        // The peer never answers: the read ends only when the watchdog shuts the socket down.
        let read = client.read(&mut [0u8; 16]).unwrap_or(0);
        assert_eq!(read, 0);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(guard.disarm());
        // One answered in time is left alone.
        let quick = arm(socket, Duration::from_secs(60));
        assert!(!quick.disarm());
    }
}
