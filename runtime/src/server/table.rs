//! The connection table: every connection open, whether it is still in its TLS handshake, and
//! whether it has a request in flight. At the connection cap the server makes room the way nginx
//! does when it runs out of connections, rather than make a new caller wait: it closes the
//! connection longest in its handshake, else the one idle longest (gracefully: HTTP/2 GOAWAY,
//! HTTP/1.1 close). Only connections with a request in flight hold their place for sure, so a
//! table full of idle keep-alive connections or of handshakes that never finish cannot lock CAPI
//! out.

use super::connection::Activity;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What a connection is doing, as the table sees it.
enum State {
    /// Accepted, its TLS handshake not done.
    Handshaking,
    /// Served by hyper; its activity says whether a request is in flight.
    Serving(Arc<Activity>),
}

struct Entry {
    opened: Instant,
    state: State,
    /// Told to close.
    evict: Arc<Notify>,
    /// Already told: not chosen twice while it closes.
    evicting: bool,
}

/// The open connections.
#[derive(Default)]
pub(super) struct Table {
    entries: Mutex<BTreeMap<u64, Entry>>,
    next: AtomicU64,
}

/// A connection's place in the table, given up when dropped.
pub(super) struct Place {
    table: Arc<Table>,
    id: u64,
    /// Notified when the table closes the connection to make room.
    pub evict: Arc<Notify>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.table.entries.lock().expect("lock").remove(&self.id);
    }
}

impl Place {
    /// The handshake is done: from now on the connection's activity tells whether it is idle.
    pub fn serving(&self, activity: Arc<Activity>) {
        if let Some(entry) = self.table.entries.lock().expect("lock").get_mut(&self.id) {
            entry.state = State::Serving(activity);
        }
    }
}

/// What [`Table::make_room`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// Told a connection to close: why, and how long it had been in its handshake or idle.
    Evicted(Eviction, Duration),
    /// A connection told before is still closing.
    Closing,
    /// Every connection has a request in flight: none is closed.
    Full,
}

/// Why a connection was closed to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Eviction {
    /// It was still in its TLS handshake (the oldest such).
    Handshake,
    /// It had no request in flight (the one idle longest).
    Idle,
}

impl Eviction {
    /// The `reason` label of `capi_ext_connections_evicted_total`.
    pub fn reason(self) -> &'static str {
        match self {
            Eviction::Handshake => "handshake",
            Eviction::Idle => "idle",
        }
    }
}

impl Table {
    /// A place for a connection just accepted (in its handshake).
    pub fn enter(self: &Arc<Self>) -> Place {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let evict = Arc::new(Notify::new());
        self.entries.lock().expect("lock").insert(
            id,
            Entry {
                opened: Instant::now(),
                state: State::Handshaking,
                evict: evict.clone(),
                evicting: false,
            },
        );
        Place {
            table: self.clone(),
            id,
            evict,
        }
    }

    /// Makes room for one connection: tells the one longest in its TLS handshake, else the one
    /// idle longest, to close; nothing while one told before is still closing.
    pub fn make_room(&self) -> Room {
        let mut entries = self.entries.lock().expect("lock");
        if entries.values().any(|e| e.evicting) {
            return Room::Closing;
        }
        let now = Instant::now();
        let victim = entries
            .iter()
            .filter(|(_, e)| !e.evicting)
            .filter_map(|(id, e)| match &e.state {
                // Handshakes first, oldest first.
                State::Handshaking => Some((*id, Eviction::Handshake, now - e.opened)),
                State::Serving(activity) => {
                    activity.idle_for().map(|idle| (*id, Eviction::Idle, idle))
                }
            })
            .max_by_key(|(_, kind, age)| (*kind == Eviction::Handshake, *age));
        let Some((id, eviction, age)) = victim else {
            return Room::Full;
        };
        let entry = entries.get_mut(&id).expect("chosen from the table");
        entry.evicting = true;
        entry.evict.notify_one();
        Room::Evicted(eviction, age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshakes_go_first_then_the_longest_idle_and_never_a_busy_connection() {
        let table = Arc::new(Table::default());
        let busy = table.enter();
        let busy_activity = Activity::new();
        let _request = super::super::connection::InFlight::begin(&busy_activity);
        busy.serving(busy_activity.clone());
        let idle_old = table.enter();
        idle_old.serving(Activity::new());
        std::thread::sleep(Duration::from_millis(20));
        let idle_new = table.enter();
        idle_new.serving(Activity::new());
        let handshaking = table.enter();

        let evicted = |room| matches!(room, Room::Evicted(..));
        assert!(matches!(
            table.make_room(),
            Room::Evicted(Eviction::Handshake, _)
        ));
        // Nothing more while it closes.
        assert_eq!(table.make_room(), Room::Closing);
        drop(handshaking);
        assert!(matches!(
            table.make_room(),
            Room::Evicted(Eviction::Idle, _)
        ));
        // The longest idle went first, then the newer one, then nothing (busy).
        assert!(idle_old_told(&idle_old));
        drop(idle_old);
        assert!(evicted(table.make_room()));
        assert!(idle_old_told(&idle_new));
        drop(idle_new);
        assert_eq!(
            table.make_room(),
            Room::Full,
            "a busy connection was chosen"
        );
        drop(busy);
        assert!(table.entries.lock().unwrap().is_empty());
    }

    /// Whether the connection of `place` was told to close.
    fn idle_old_told(place: &Place) -> bool {
        let notified = place.evict.notified();
        tokio::pin!(notified);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        std::future::Future::poll(notified.as_mut(), &mut cx).is_ready()
    }
}
