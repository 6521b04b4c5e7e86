//! What the hooks read of the learnings before every tool call and at every session's start,
//! and the counter (V27's `hook_state`) that moves whenever any of it may have changed.
//!
//! The hooks keep what [`Store::hook_snapshot`] returns in a file and read the counter
//! ([`Store::hook_version`]) to know whether the file still holds: one indexed row instead of
//! every learning with triggers, every CRITICAL one and a count of the drafts on every call.

use serde::{Deserialize, Serialize};

use gza_core::error::Result;
use gza_core::learning::{Origin, Priority, Status, Triggers};

use crate::Store;
use crate::db::{DbResult, Row};

/// A learning as the hooks give it: what its triggers are scored by and its line is rendered
/// from. Every column read here is watched by V27's update trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookLearning {
    pub id: i64,
    pub text: String,
    pub insight: Option<String>,
    pub kind: String,
    pub triggers: Triggers,
    pub checklist: Vec<String>,
    pub confidence: f64,
    #[serde(with = "priority_text")]
    pub priority: Priority,
    #[serde(with = "status_text")]
    pub status: Status,
    #[serde(with = "origin_text")]
    pub origin: Origin,
    /// When it decays out of use (Unix seconds; `None`: never): a hook stops giving it then,
    /// whatever snapshot it reads. Absent from a file an older gza wrote: never, until the
    /// counter moves and the snapshot is read again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decays_at: Option<i64>,
}

impl HookLearning {
    /// Whether it has decayed out of use by now ([`gza_core::learning::Learning::is_decayed`]).
    pub fn is_decayed(&self) -> bool {
        self.decays_at
            .is_some_and(|at| chrono::Utc::now().timestamp() >= at)
    }
}

impl From<&gza_core::learning::Learning> for HookLearning {
    fn from(l: &gza_core::learning::Learning) -> Self {
        HookLearning {
            id: l.id,
            text: l.text.clone(),
            insight: l.insight.clone(),
            kind: l.kind.clone(),
            triggers: l.triggers.clone(),
            checklist: l.checklist.clone(),
            confidence: l.confidence,
            priority: l.priority,
            status: l.status,
            origin: l.origin,
            decays_at: l.decays_at(),
        }
    }
}

/// What the hooks need of the learnings in use (active ones and drafts, none quarantined), as
/// of one `version` of the counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookSnapshot {
    /// `hook_state.version` when this was read (in the same read transaction).
    pub version: i64,
    /// `hook_state.nonce`: random per database, so a snapshot file another database (or a
    /// repository) produced never passes for this one's.
    pub nonce: String,
    /// Learnings in use with trigger conditions, oldest first.
    pub triggered: Vec<HookLearning>,
    /// CRITICAL learnings in use, oldest first (with or without triggers).
    pub critical: Vec<HookLearning>,
    /// Drafts awaiting review (quarantined ones included: they await a person too).
    pub drafts: i64,
}

/// The columns of a [`HookLearning`], in its fields' order.
const COLUMNS: &str = "l.id, l.text, l.insight, l.kind, l.triggers, l.checklist, l.confidence, \
     l.priority, l.status, l.origin, l.tier, l.confirmed_at";

/// Learnings in use, as the snapshot selects them.
const IN_USE: &str = "l.status IN ('active', 'draft') AND l.quarantine_reason IS NULL";

fn from_row(r: &Row) -> DbResult<HookLearning> {
    let list = |text: String| -> Vec<String> {
        if text == "[]" {
            Vec::new()
        } else {
            serde_json::from_str(&text).unwrap_or_default()
        }
    };
    let confidence: f64 = r.get(6)?;
    let priority = Priority::parse(&r.get::<String>(7)?).unwrap_or_default();
    let origin = Origin::parse(&r.get::<String>(9)?).unwrap_or(Origin::User);
    let decays_at = gza_core::learning::decays_at(
        priority,
        origin,
        r.get(10)?,
        confidence,
        &r.get::<String>(11)?,
    );
    Ok(HookLearning {
        id: r.get(0)?,
        text: r.get(1)?,
        insight: r.get(2)?,
        kind: r.get(3)?,
        triggers: serde_json::from_str(&r.get::<String>(4)?).unwrap_or_default(),
        checklist: list(r.get(5)?),
        confidence,
        priority,
        status: Status::parse(&r.get::<String>(8)?).unwrap_or(Status::Active),
        origin,
        decays_at,
    })
}

impl Store {
    /// The counter V27's triggers move on every change to what [`Store::hook_snapshot`] reads,
    /// and the database's nonce: a snapshot is current when both are its own.
    pub fn hook_version(&self) -> Result<(i64, String)> {
        self.db
            .query_opt(
                "SELECT version, nonce FROM hook_state WHERE id = 1",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map(|v| v.unwrap_or_default())
            .map_err(|e| self.err(e))
    }

    /// Everything the PreToolUse and SessionStart hooks read of the learnings, with the
    /// counter's value. The counter is read first and the learnings after it, outside any
    /// transaction (a hook takes no lock and holds no snapshot open): a change made between
    /// the reads is then in the content but not in the version, so the next hook finds the
    /// counter moved and reads again. The version never names more than the content holds.
    /// Indexed throughout: the learnings with triggers (`learnings_triggered`), the CRITICAL
    /// ones (`learnings_critical`) and the drafts (`learnings_status`); nothing reads every row.
    pub fn hook_snapshot(&self) -> Result<HookSnapshot> {
        let (version, nonce) = self.hook_version()?;
        let triggered: Vec<HookLearning> = self
            .db
            .query_map(
                &format!(
                    "SELECT {COLUMNS} FROM learnings l INDEXED BY learnings_triggered \
                     WHERE l.triggers NOT IN ('{{}}', '') AND {IN_USE} ORDER BY l.id"
                ),
                params![],
                from_row,
            )
            .map_err(|e| self.err(e))?
            .into_iter()
            .filter(|l| !l.triggers.is_empty())
            .collect();
        let critical = self
            .db
            .query_map(
                &format!(
                    "SELECT {COLUMNS} FROM learnings l INDEXED BY learnings_critical \
                     WHERE l.priority = 'CRITICAL' AND {IN_USE} ORDER BY l.id"
                ),
                params![],
                from_row,
            )
            .map_err(|e| self.err(e))?;
        let drafts = self.draft_count()?;
        Ok(HookSnapshot {
            version,
            nonce,
            triggered,
            critical,
            drafts,
        })
    }
}

/// What a hook far from its database (team mode) keeps of it: the snapshot above, every
/// learning in use as the prompt hook gives it and as ranking reads it, and the stamps that say
/// when any of it changed. Read in one read transaction, so its parts are of one moment.
#[derive(Debug, Clone)]
pub struct FarSnapshot {
    pub hooks: HookSnapshot,
    /// The ranking generation (V38) the rows are of.
    pub generation: i64,
    /// Every learning in use (active ones and drafts, none quarantined), by id.
    pub in_use: Vec<HookLearning>,
    /// The same learnings as ranking reads them, by id.
    pub rows: Vec<crate::RankRow>,
}

impl Store {
    /// The hook counter, the ranking generation and the nonce, in one read: whether a
    /// [`FarSnapshot`] still holds.
    pub fn far_stamp(&self) -> Result<(i64, i64, String)> {
        self.db
            .query_opt(
                "SELECT h.version, g.generation, h.nonce FROM hook_state h, learnings_generation g \
                 WHERE h.id = 1 AND g.id = 1",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map(|v| v.unwrap_or_default())
            .map_err(|e| self.err(e))
    }

    /// Everything a far hook reads, in one read transaction (a background job's read: it scans
    /// every learning in use, never on a hook's path).
    pub fn far_snapshot(&self) -> Result<FarSnapshot> {
        let tx = self.db.read_transaction().map_err(|e| self.err(e))?;
        let (_, generation, _) = self.far_stamp()?;
        let hooks = self.hook_snapshot()?;
        let in_use = self
            .db
            .query_map(
                &format!("SELECT {COLUMNS} FROM learnings l WHERE {IN_USE} ORDER BY l.id"),
                params![],
                from_row,
            )
            .map_err(|e| self.err(e))?;
        let rows = self.rank_rows(true)?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(FarSnapshot {
            hooks,
            generation,
            in_use,
            rows,
        })
    }
}

/// A priority, status or origin as the text the database stores.
macro_rules! text_serde {
    ($module:ident, $ty:ty) => {
        mod $module {
            use serde::{Deserialize, Deserializer, Serializer};

            pub fn serialize<S: Serializer>(v: &$ty, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(v.as_str())
            }

            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                <$ty>::parse(&text)
                    .ok_or_else(|| serde::de::Error::custom(format!("unknown value {text:?}")))
            }
        }
    };
}

text_serde!(priority_text, gza_core::learning::Priority);
text_serde!(status_text, gza_core::learning::Status);
text_serde!(origin_text, gza_core::learning::Origin);

#[cfg(test)]
mod tests {
    use super::*;
    use gza_core::learning::NewLearning;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("gza.db")).unwrap();
        (dir, store)
    }

    /// A store knows when one of its statements moved the hooks' counter (through V27's
    /// triggers), and runs what the process registered once, as it closes: every writer of
    /// learnings refreshes the hooks' snapshot. Writes that leave the counter alone
    /// (injections, a column the snapshot does not read) run nothing.
    #[test]
    fn a_store_that_moved_the_hooks_counter_refreshes_their_snapshot_as_it_closes() {
        static CLOSED: std::sync::Mutex<Vec<std::path::PathBuf>> =
            std::sync::Mutex::new(Vec::new());
        fn note(store: &Store) {
            let path = store.sqlite_path().expect("sqlite").to_path_buf();
            CLOSED.lock().unwrap().push(path);
        }
        crate::after_hook_change(note);
        let runs = |path: &std::path::Path| {
            CLOSED
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p.as_path() == path)
                .count()
        };
        let (dir, store) = store();
        let path = dir.path().join("gza.db");
        // Creating it made the counter's row.
        assert!(store.hook_changed());
        store.announce_hook_change();
        assert_eq!(runs(&path), 1);
        assert!(!store.hook_changed());

        let id = store
            .add_learning(&NewLearning::new(
                "General",
                "Run make check before pushing",
                Origin::User,
            ))
            .unwrap();
        assert!(
            store.hook_changed(),
            "the insert's trigger moved the counter"
        );
        store.announce_hook_change();
        assert_eq!(runs(&path), 2);

        store
            .db
            .execute(
                "UPDATE learnings SET section = 'Testing Patterns' WHERE id = ?1",
                params![id],
            )
            .unwrap();
        store
            .record_injections(None, Some("s1"), "PreToolUse", &[id])
            .unwrap();
        assert!(!store.hook_changed(), "nothing the hooks read changed");
        store.announce_hook_change();
        assert_eq!(runs(&path), 2);

        store
            .db
            .execute(
                "UPDATE learnings SET text = 'Run make check before every push' WHERE id = ?1",
                params![id],
            )
            .unwrap();
        drop(store);
        assert_eq!(runs(&path), 3, "closing the store ran it");
    }

    /// Every column of `learnings` that the snapshot's queries name must move the counter when
    /// it changes (and nothing else may: validation rewrites its columns on every
    /// regeneration). A column added to the snapshot, or to what "in use" means, fails here
    /// until V27's trigger (in a new migration) watches it too.
    #[test]
    fn hook_snapshot_columns_move_the_version() {
        let (_dir, store) = store();
        let id = store
            .add_learning(&NewLearning::new(
                "General",
                "Run make check before pushing",
                Origin::User,
            ))
            .unwrap();
        let sql = format!("{COLUMNS} {IN_USE} l.priority l.triggers");
        let columns: Vec<String> = store
            .db
            .query_map(
                "SELECT name FROM pragma_table_info('learnings')",
                params![],
                |r| r.get(0),
            )
            .unwrap();
        let mut checked = 0;
        for column in &columns {
            let read = sql.contains(&format!("l.{column}")) && column != "id";
            let before = store.hook_version().unwrap().0;
            // A value of the column's kind that differs from what is there.
            let value = match column.as_str() {
                "confidence" => "0.55".to_string(),
                "priority" => "'HIGH'".to_string(),
                "status" => "'draft'".to_string(),
                "origin" => "'agent'".to_string(),
                "tier" => "2".to_string(),
                "triggers" => r#"'{"tools": ["Bash"]}'"#.to_string(),
                "checklist" | "keywords" | "applies_when" => r#"'["x"]'"#.to_string(),
                _ => format!("'changed {column}'"),
            };
            if column == "id" {
                continue;
            }
            let changed = store
                .db
                .execute(
                    &format!("UPDATE learnings SET {column} = {value} WHERE id = ?1"),
                    params![id],
                )
                .is_ok();
            if !changed {
                continue;
            }
            let after = store.hook_version().unwrap().0;
            assert_eq!(
                after > before,
                read,
                "changing learnings.{column} {} the hooks' version",
                if read { "must move" } else { "must not move" }
            );
            checked += usize::from(read);
            // The same value again moves nothing.
            store
                .db
                .execute(
                    &format!("UPDATE learnings SET {column} = {value} WHERE id = ?1"),
                    params![id],
                )
                .unwrap();
            assert_eq!(store.hook_version().unwrap().0, after, "{column} unchanged");
        }
        assert!(checked >= 9, "only {checked} watched columns were checked");
    }

    #[test]
    fn the_snapshot_holds_what_the_hooks_give_and_inserts_and_deletes_move_the_version() {
        let (_dir, store) = store();
        let v0 = store.hook_version().unwrap().0;
        let mut critical = NewLearning::new("General", "Never force-push main", Origin::User);
        critical.priority = Priority::Critical;
        let ids = [
            store.add_learning(&critical).unwrap(),
            store
                .add_learning(&NewLearning::new(
                    "General",
                    "Prefer small commits",
                    Origin::User,
                ))
                .unwrap(),
        ];
        let v1 = store.hook_version().unwrap().0;
        assert!(v1 > v0);
        store
            .db
            .execute(
                r#"UPDATE learnings SET triggers = '{"tools": ["Write"], "files": ["**/plugin.json"]}' WHERE id = ?1"#,
                params![ids[1]],
            )
            .unwrap();
        let snap = store.hook_snapshot().unwrap();
        assert_eq!(
            (snap.version, snap.nonce.clone()),
            store.hook_version().unwrap()
        );
        assert_eq!(snap.nonce.len(), 32, "128 random bits");
        assert!(snap.version > v1);
        assert_eq!(
            snap.critical.iter().map(|l| l.id).collect::<Vec<_>>(),
            vec![ids[0]]
        );
        assert_eq!(
            snap.triggered.iter().map(|l| l.id).collect::<Vec<_>>(),
            vec![ids[1]]
        );
        assert_eq!(snap.triggered[0].triggers.tools, vec!["Write"]);
        assert_eq!(snap.drafts, 0);
        let json = serde_json::to_string(&snap).unwrap();
        assert_eq!(
            serde_json::from_str::<HookSnapshot>(&json).unwrap(),
            snap,
            "the snapshot survives its file"
        );
        // Quarantined: out of the snapshot.
        store
            .db
            .execute(
                "UPDATE learnings SET quarantine_reason = 'held' WHERE id = ?1",
                params![ids[0]],
            )
            .unwrap();
        let held = store.hook_snapshot().unwrap();
        assert!(held.critical.is_empty() && held.version > snap.version);
        store
            .db
            .execute("DELETE FROM learnings WHERE id = ?1", params![ids[1]])
            .unwrap();
        assert!(store.hook_version().unwrap().0 > held.version);
    }
}
