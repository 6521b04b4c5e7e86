//! Stats as charts: tasks per day by outcome, cost per day, the injection rate, learnings added
//! and archived per week, and how often tasks given learnings completed against those given none.
//! Every figure comes from the window's rows only (an index on `completed_at`), never the whole
//! history.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use chrono::{Duration, Utc};
use maud::{Markup, html};

use super::{Failure, Nav, layout, read};
use crate::serve::App;
use crate::serve::charts::{Series, bars};
use crate::task::TaskStatus;

/// Days the daily charts cover, unless asked (at most a year).
const DAYS: i64 = 30;
/// Weeks the weekly chart covers.
const WEEKS: i64 = 12;

#[derive(Debug, Default, serde::Deserialize)]
pub struct StatsQuery {
    days: Option<i64>,
    flash: Option<String>,
}

pub async fn stats_page(
    State(app): State<Arc<App>>,
    Query(q): Query<StatsQuery>,
) -> Result<Markup, Failure> {
    let days = q.days.unwrap_or(DAYS).clamp(1, 366);
    read(&app, move |app, store| {
        let today = Utc::now().date_naive();
        let first = today - Duration::days(days - 1);
        let tallies = store.finished_by_day(&first.format("%Y-%m-%d").to_string())?;
        let labels: Vec<String> = (0..days)
            .map(|i| (first + Duration::days(i)).format("%m-%d").to_string())
            .collect();
        let index: BTreeMap<String, usize> = (0..days)
            .map(|i| ((first + Duration::days(i)).format("%Y-%m-%d").to_string(), i as usize))
            .collect();
        let n = days as usize;
        let mut by_status: std::collections::HashMap<TaskStatus, Vec<f64>> = Default::default();
        let mut cost = vec![0.0; n];
        let mut finished = vec![0.0; n];
        let mut given = vec![0.0; n];
        // Completion of tasks given learnings vs not, over the window.
        let (mut given_done, mut given_all, mut bare_done, mut bare_all) = (0i64, 0i64, 0i64, 0i64);
        for t in &tallies {
            let Some(&i) = index.get(&t.day) else { continue };
            by_status.entry(t.status).or_insert_with(|| vec![0.0; n])[i] += t.tasks as f64;
            cost[i] += t.cost_usd;
            finished[i] += t.tasks as f64;
            given[i] += t.given_learnings as f64;
            given_all += t.given_learnings;
            bare_all += t.tasks - t.given_learnings;
            if t.status == TaskStatus::Completed {
                given_done += t.given_learnings;
                bare_done += t.tasks - t.given_learnings;
            }
        }
        let rate: Vec<f64> = finished
            .iter()
            .zip(&given)
            .map(|(f, g)| if *f > 0.0 { g / f * 100.0 } else { 0.0 })
            .collect();
        let outcome = |status: TaskStatus, name: &'static str| Series {
            name,
            class: status.as_str(),
            values: by_status.get(&status).cloned().unwrap_or_else(|| vec![0.0; n]),
        };
        let week_start = today - Duration::days(7 * WEEKS);
        let weeks = store.learnings_by_week(&week_start.format("%Y-%m-%d").to_string())?;
        let week_labels: Vec<String> = weeks.iter().map(|w| w.week.get(5..).unwrap_or(&w.week).to_string()).collect();
        let share = |done: i64, all: i64| if all > 0 { done as f64 / all as f64 * 100.0 } else { 0.0 };
        let totals = store.stats()?;
        let body = html! {
            h1 { "Stats" }
            p.summary {
                (totals.total) " tasks in all · "
                (crate::cli::output::cost(Some(totals.cost_usd.total))) " spent · last "
                (days) " days below ("
                a href="/stats?days=7" { "7" } ", " a href="/stats?days=30" { "30" } ", " a href="/stats?days=90" { "90" } ")"
            }
            div.charts {
                (bars("Tasks finished per day, by outcome", &labels, &[
                    outcome(TaskStatus::Completed, "completed"),
                    outcome(TaskStatus::Failed, "failed"),
                    outcome(TaskStatus::Dropped, "dropped"),
                ], true, |v| format!("{v:.0}")))
                (bars("Cost per day", &labels, &[Series { name: "USD", class: "cost", values: cost }], true, |v| format!("${v:.2}")))
                (bars("Injection rate: share of finished tasks given learnings", &labels, &[Series { name: "%", class: "rate", values: rate }], true, |v| format!("{v:.0}%")))
                (bars("Learnings added and archived per week", &week_labels, &[
                    Series { name: "added", class: "added", values: weeks.iter().map(|w| w.added as f64).collect() },
                    Series { name: "archived", class: "archived", values: weeks.iter().map(|w| w.archived as f64).collect() },
                ], false, |v| format!("{v:.0}")))
                (bars("Tasks that completed: given learnings vs given none", &[
                    format!("given learnings ({given_done}/{given_all})"),
                    format!("given none ({bare_done}/{bare_all})"),
                ], &[Series { name: "% completed", class: "completed", values: vec![share(given_done, given_all), share(bare_done, bare_all)] }], true, |v| format!("{v:.0}%")))
            }
            p.note { "A share is not a cause: tasks given learnings may differ from the rest in kind. The figures count tasks by the day they finished." }
        };
        Ok(layout(app, Nav::Stats, "Stats", q.flash.as_deref(), body))
    })
    .await
}
