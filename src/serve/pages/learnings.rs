//! Learnings: the list with its filters and the search by meaning (with the ranker's
//! explanation), one learning in full (provenance, the tasks it was given to and how they ended,
//! evidence, history; edit, archive, restore), and the drafts awaiting a person.

use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::Response;
use maud::{Markup, html};

use super::{Failure, Flash, Nav, act, button, csrf_field, done, given, layout, read, shown};
use crate::learn::rank::{self, Ranker};
use crate::learning::{Learning, Origin, Priority, Status};
use crate::serve::App;
use crate::store::Store;

/// Most hits a search shows (and as many again below the cut).
const SEARCH_K: usize = 10;
/// Most learnings a list shows.
const LIST_MAX: usize = 500;

#[derive(Debug, Default, serde::Deserialize)]
pub struct LearningsQuery {
    q: Option<String>,
    section: Option<String>,
    status: Option<String>,
    tier: Option<String>,
    origin: Option<String>,
    priority: Option<String>,
    flash: Option<String>,
}

/// The list's filters, checked.
struct Filters {
    section: Option<String>,
    status: Option<Status>,
    tier: Option<u8>,
    origin: Option<Origin>,
    priority: Option<Priority>,
}

impl Filters {
    fn parse(q: &LearningsQuery) -> Result<Filters, Failure> {
        let bad = |what: &str, value: &str, expected: &str| {
            Failure::bad_request(format!(
                "unknown {what} {:?}; expected {expected}",
                crate::cli::output::one_line(value, 40)
            ))
        };
        Ok(Filters {
            section: given(&q.section).map(str::to_string),
            status: match given(&q.status) {
                Some(s) => Some(
                    Status::parse(s)
                        .ok_or_else(|| bad("status", s, "draft, active or archived"))?,
                ),
                None => None,
            },
            tier: match given(&q.tier) {
                Some("1") => Some(1),
                Some("2") => Some(2),
                Some(t) => return Err(bad("tier", t, "1 or 2")),
                None => None,
            },
            origin: match given(&q.origin) {
                Some(o) => {
                    Some(Origin::parse(o).ok_or_else(|| bad("origin", o, "agent, llm or user"))?)
                }
                None => None,
            },
            priority: match given(&q.priority) {
                Some(p) => Some(
                    Priority::parse(p)
                        .ok_or_else(|| bad("priority", p, "CRITICAL, HIGH, MEDIUM or LOW"))?,
                ),
                None => None,
            },
        })
    }

    fn keeps(&self, l: &Learning) -> bool {
        self.section
            .as_ref()
            .is_none_or(|s| l.section.eq_ignore_ascii_case(s))
            && self.status.is_none_or(|s| l.status == s)
            && self.tier.is_none_or(|t| l.lifecycle.tier == t)
            && self.origin.is_none_or(|o| l.origin == o)
            && self.priority.is_none_or(|p| l.priority == p)
    }
}

pub async fn learnings_page(
    State(app): State<Arc<App>>,
    Query(q): Query<LearningsQuery>,
) -> Result<Markup, Failure> {
    let filters = Filters::parse(&q)?;
    read(&app, move |app, store| {
        let all = store.learnings(true)?;
        let mut sections: Vec<String> = app.project.config.learnings.sections.clone();
        for l in &all {
            if !sections.contains(&l.section) {
                sections.push(l.section.clone());
            }
        }
        let search = given(&q.q).map(str::to_string);
        let results = match &search {
            Some(text) => Some(search_learnings(app, store, text, &filters)?),
            None => None,
        };
        let listed: Vec<&Learning> = all.iter().filter(|l| filters.keeps(l)).take(LIST_MAX).collect();
        let select = |name: &str, options: &[(&str, &str)], current: Option<&str>| html! {
            select name=(name) {
                option value="" { "any " (name) }
                @for (value, text) in options {
                    option value=(value) selected[current == Some(*value)] { (text) }
                }
            }
        };
        let section_options: Vec<(&str, &str)> = sections.iter().map(|s| (s.as_str(), s.as_str())).collect();
        let body = html! {
            h1 { "Learnings" }
            form.filters method="get" action="/learnings" {
                input type="search" name="q" value=[search.as_deref()] placeholder="Search by meaning: a task, a question, some words";
                (select("section", &section_options, filters.section.as_deref()))
                (select("status", &[("active", "active"), ("draft", "draft"), ("archived", "archived")], filters.status.map(|s| s.as_str())))
                (select("tier", &[("1", "tier 1"), ("2", "tier 2")], given(&q.tier)))
                (select("origin", &[("agent", "agent"), ("llm", "llm"), ("user", "user")], filters.origin.map(|o| o.as_str())))
                (select("priority", &[("CRITICAL", "CRITICAL"), ("HIGH", "HIGH"), ("MEDIUM", "MEDIUM"), ("LOW", "LOW")], filters.priority.map(|p| p.as_str())))
                button type="submit" { "Show" }
            }
            @if let Some(results) = &results { (results) }
            @else {
                p.summary { (listed.len()) " of " (all.len()) " learnings" @if listed.len() == LIST_MAX { " (the first " (LIST_MAX) "; narrow the filters)" } }
                table.list.learnings {
                    thead { tr { th { "ID" } th { "Learning" } th { "Section" } th { "Status" } th { "Tier" } th { "Origin" } th { "Priority" } th { "Given" } } }
                    tbody {
                        @for l in &listed { (learning_row(l)) }
                    }
                }
            }
        };
        Ok(layout(app, Nav::Learnings, "Learnings", q.flash.as_deref(), body))
    })
    .await
}

fn learning_row(l: &Learning) -> Markup {
    html! {
        tr data-id=(l.label()) {
            td { a href=(format!("/learnings/{}", l.label())) { (l.label()) } }
            td.text {
                (shown(&l.text))
                @if l.lifecycle.quarantine_reason.is_some() { " " span.badge.quarantined { "quarantined" } }
                @if l.lifecycle.stale_reason.is_some() { " " span.badge { "stale" } }
            }
            td { (shown(&l.section)) }
            td { span.status.(l.status.as_str()) { (l.status.as_str()) } }
            td { (l.lifecycle.tier) }
            td { (l.origin.as_str()) }
            td { (l.priority.as_str()) }
            td { (l.injected) }
        }
    }
}

/// `gza learnings search --explain`, as a table: the hits with how each score was made, then
/// the best below the cut.
fn search_learnings(
    app: &App,
    store: &Store,
    text: &str,
    filters: &Filters,
) -> Result<Markup, crate::Error> {
    let ranker = Ranker::load(&app.project);
    let (hits, below) = ranker.search_with_rest(
        store,
        rank::Query {
            text,
            k: SEARCH_K,
            calibrated: true,
            drafts: true,
        },
    )?;
    let found = rank::hits_with_records(store, &hits)?;
    let below = rank::hits_with_records(store, &below)?;
    let rows = |list: &[(rank::Hit, Learning)]| {
        html! {
            @for (h, l) in list.iter().filter(|(_, l)| filters.keeps(l)) {
                tr data-id=(l.label()) {
                    td { a href=(format!("/learnings/{}", l.label())) { (l.label()) } }
                    td.score { (format!("{:.2}", h.score)) }
                    td.text { (shown(&l.text)) div.explain { (shown(&h.explanation())) } }
                    td { (shown(&l.section)) }
                    td { span.status.(l.status.as_str()) { (l.status.as_str()) } }
                }
            }
        }
    };
    Ok(html! {
        @if let Some(problem) = ranker.model_problem() {
            p.warning { (problem) "; ranking by words only" }
        }
        h2 { "Matches" }
        @if found.is_empty() { p.empty { "No learning matches." } }
        @else {
            table.list.search { thead { tr { th { "ID" } th { "Score" } th { "Learning" } th { "Section" } th { "Status" } } } tbody { (rows(&found)) } }
        }
        @if !below.is_empty() {
            h2 { "Below the cut" }
            table.list.search.below { tbody { (rows(&below)) } }
        }
    })
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct OneQuery {
    flash: Option<String>,
}

/// The finished tasks a learning's page lists, newest first (its summary counts them all).
const OUTCOMES_LISTED: u32 = 50;

pub async fn learning_page(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<OneQuery>,
) -> Result<Markup, Failure> {
    read(&app, move |app, store| {
        let l = crate::actions::learning_by_id(store, &id)?;
        let sources = store.learning_sources(l.id)?;
        let counts = store.injection_outcome_counts(l.id)?;
        let outcomes = store.injection_outcomes(l.id, false, OUTCOMES_LISTED)?;
        let events = store.learning_events(l.id)?;
        let listed_more = counts.completed + counts.failed - outcomes.len() as i64;
        let title = l.label();
        let lc = &l.lifecycle;
        let body = html! {
            h1 { (l.label()) " " span.status.(l.status.as_str()) { (l.status.as_str()) } }
            blockquote.learning-text { (shown(&l.text)) }
            @if let Some(q) = &lc.quarantine_reason {
                p.warning.quarantine { "Quarantined: " (shown(q)) ". Never injected until a person accepts it." }
            }
            div.actions {
                @match l.status {
                    Status::Archived => (button(app, &format!("/learnings/{}/restore", l.label()), "Restore", None, "")),
                    Status::Draft => {
                        (button(app, &format!("/learnings/{}/promote", l.label()), "Promote", None, "primary"))
                        (button(app, &format!("/learnings/{}/archive", l.label()), "Archive", Some("Archive this learning?"), "quiet"))
                    }
                    Status::Active => {
                        @if lc.quarantine_reason.is_some() {
                            (button(app, &format!("/learnings/{}/promote", l.label()), "Accept", None, "primary"))
                        }
                        (button(app, &format!("/learnings/{}/archive", l.label()), "Archive", Some("Archive this learning?"), "quiet"))
                    }
                }
            }
            table.facts {
                tr { th { "Section" } td { (shown(&l.section)) } }
                tr { th { "Priority" } td { (l.priority.as_str()) } }
                tr { th { "Confidence" } td { (format!("{:.2}", l.confidence)) } }
                tr { th { "Origin" } td { (l.origin.as_str()) } }
                tr { th { "Tier" } td { (l.tier_text()) } }
                @if let Some(r) = &l.status_reason { tr { th { "Status reason" } td { (shown(r)) } } }
                @if !l.keywords.is_empty() { tr { th { "Keywords" } td { (shown(&l.keywords.join(", "))) } } }
                @if !l.applies_when.is_empty() { tr { th { "Applies when" } td { (shown(&l.applies_when.join("; "))) } } }
                @if let Some(s) = &lc.stale_reason { tr { th { "Stale" } td { (shown(s)) } } }
                @if let Some(i) = &l.insight { tr { th { "Insight" } td { (shown(i)) } } }
                @if let Some(e) = &l.example { tr { th { "Example" } td { (shown(e)) } } }
                tr { th { "Injected" } td { (l.injected) " times" } }
                tr { th { "Created" } td { (l.created_at) } }
                tr { th { "Updated" } td { (l.updated_at) } }
            }
            section {
                h2 { "Provenance" }
                @if sources.is_empty() { p.empty { "No task or session recorded (a person's own, or imported)" } }
                ul.sources {
                    @for s in &sources {
                        li {
                            @match (&s.task, &s.session) {
                                (Some(t), _) => { a href=(format!("/tasks/{t}")) { "task " (t) } }
                                (None, Some(session)) => { "session " code { (shown(&crate::cli::output::one_line(session, 24))) } }
                                (None, None) => { "?" }
                            }
                            " " span.kind { (s.kind) } " " span.at { (s.at) }
                        }
                    }
                }
            }
            section {
                h2 { "Given to" }
                @if outcomes.is_empty() { p.empty { "No finished task was given it yet" } }
                @else {
                    p.summary { (counts.completed) " completed, " (counts.failed) " did not" }
                    ul.outcomes {
                        @for o in &outcomes {
                            li {
                                a href=(format!("/tasks/{}", o.task)) { "task " (o.task) } " "
                                span.status.(o.status.as_str()) { (o.status.as_str()) }
                                @if let Some(r) = &o.failure_reason { " " span.reason { (r.as_str()) } }
                            }
                        }
                        @if listed_more > 0 { li.more { "and " (listed_more) " more" } }
                    }
                }
            }
            section {
                h2 { "Evidence" }
                @match &lc.evidence {
                    Some(e) => {
                        @if !e.terms.is_empty() { p { "Terms: " (shown(&e.terms.join(", "))) } }
                        p { (e.count) " file" @if e.count != 1 { "s" } " matched (" (e.at) ")" }
                        ul.files { @for f in &e.files { li { code { (shown(f)) } } } }
                    }
                    None => { p.empty { "Not validated yet (`gza learnings validate`)" } }
                }
            }
            section {
                h2 { "History" }
                ol.history {
                    @for e in &events {
                        li { span.at { (e.at) } " " (e.event) @if let Some(d) = &e.detail { " (" (shown(d)) ")" } }
                    }
                }
            }
            @if !app.read_only {
                section {
                    h2 { "Edit" }
                    (edit_form(app, &l, "learning"))
                }
            }
        };
        Ok(layout(app, Nav::Learnings, &title, q.flash.as_deref(), body))
    })
    .await
}

fn edit_form(app: &App, l: &Learning, back: &str) -> Markup {
    html! {
        form.edit method="post" action=(format!("/learnings/{}/edit", l.label())) {
            (csrf_field(app))
            input type="hidden" name="back" value=(back);
            textarea name="text" rows="3" { (shown(&l.text)) }
            div.row {
                label { "Section " input name="section" value=(shown(&l.section)); }
                label { "Priority "
                    select name="priority" {
                        @for p in ["CRITICAL", "HIGH", "MEDIUM", "LOW"] {
                            option value=(p) selected[l.priority.as_str() == p] { (p) }
                        }
                    }
                }
                label { "Keywords " input name="keywords" value=(shown(&l.keywords.join(", "))); }
                button type="submit" { "Save" }
            }
        }
    }
}

pub async fn drafts_page(
    State(app): State<Arc<App>>,
    Query(q): Query<OneQuery>,
) -> Result<Markup, Failure> {
    read(&app, move |app, store| {
        let queue = store.review_queue()?;
        let body = html! {
            h1 { "Drafts" }
            p.summary {
                @if queue.is_empty() { "Nothing awaits review." }
                @else { (queue.len()) " awaiting a person: promote what is right, edit what is almost, archive the rest." }
            }
            @for l in &queue {
                article.draftcard id=(format!("draft-{}", l.label())) data-id=(l.label()) {
                    div.head {
                        a href=(format!("/learnings/{}", l.label())) { (l.label()) }
                        span { (shown(&l.section)) }
                        span { (l.origin.as_str()) }
                        span.status.(l.status.as_str()) { (l.status.as_str()) }
                    }
                    p.text { (shown(&l.text)) }
                    @if let Some(q) = &l.lifecycle.quarantine_reason {
                        p.warning.quarantine { "Quarantined: " (shown(q)) }
                    }
                    div.actions {
                        (button(app, &format!("/learnings/{}/promote?back=drafts", l.label()), if l.lifecycle.quarantine_reason.is_some() { "Accept" } else { "Promote" }, None, "primary"))
                        (button(app, &format!("/learnings/{}/archive?back=drafts", l.label()), "Archive", None, "quiet"))
                    }
                    @if !app.read_only {
                        details { summary { "Edit" } (edit_form(app, l, "drafts")) }
                    }
                }
            }
        };
        Ok(layout(app, Nav::Drafts, "Drafts", q.flash.as_deref(), body))
    })
    .await
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct BackQuery {
    back: Option<String>,
}

/// Where an action on a learning leads: the drafts, or the learning's page.
fn back_to(back: Option<&str>, label: &str) -> String {
    match back {
        Some("drafts") => "/drafts".to_string(),
        _ => format!("/learnings/{label}"),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct EditForm {
    text: Option<String>,
    section: Option<String>,
    priority: Option<String>,
    keywords: Option<String>,
    back: Option<String>,
}

/// `gza learnings edit`: only what the form changed is changed.
pub async fn edit(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    axum::Form(form): axum::Form<EditForm>,
) -> Result<Response, Failure> {
    let priority = match given(&form.priority) {
        Some(p) => Some(Priority::parse(p).ok_or_else(|| {
            Failure::bad_request("unknown priority; expected CRITICAL, HIGH, MEDIUM or LOW")
        })?),
        None => None,
    };
    let back = form.back.clone();
    let edited = act(&app, move |app, store| {
        let now = crate::actions::learning_by_id(store, &id)?;
        // Fields the form sends unchanged are left alone (an edit records only what changed).
        let text = given(&form.text)
            .map(|t| t.replace("\r\n", "\n"))
            .filter(|t| t.trim() != now.text.trim());
        let section = given(&form.section)
            .filter(|s| !s.eq_ignore_ascii_case(&now.section))
            .map(str::to_string);
        let keywords = form.keywords.as_deref().map(|k| {
            k.split(',')
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        });
        let keywords = keywords.filter(|k| *k != now.keywords);
        let change = crate::actions::EditLearning {
            text,
            section,
            priority: priority.filter(|p| *p != now.priority),
            keywords,
            applies_when: None,
            triggers: None,
        };
        crate::actions::edit_learning(&app.project, store, &id, &change, || {})
    })
    .await?;
    let label = edited.learning.label();
    let flash = if edited.held.is_some() {
        Flash::Held(edited.learning.id)
    } else {
        Flash::Edited(edited.learning.id)
    };
    Ok(done(&back_to(back.as_deref(), &label), flash))
}

async fn set_status(
    app: Arc<App>,
    id: String,
    back: Option<String>,
    status: Status,
) -> Result<Response, Failure> {
    let ids = vec![id];
    let changes = act(&app, move |app, store| {
        let reason = if status == Status::Archived {
            "archived on the dashboard"
        } else {
            "restored on the dashboard"
        };
        crate::actions::set_learning_status(&app.project, store, &ids, status, Some(reason), || {})
    })
    .await?;
    let c = changes.into_iter().next().expect("one id, one change");
    let flash = match (c.changed, status) {
        (false, _) => Flash::Unchanged(c.learning.id),
        (true, Status::Archived) => Flash::Archived(c.learning.id),
        (true, _) => Flash::Restored(c.learning.id),
    };
    Ok(done(&back_to(back.as_deref(), &c.learning.label()), flash))
}

pub async fn archive(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<BackQuery>,
) -> Result<Response, Failure> {
    set_status(app, id, q.back, Status::Archived).await
}

pub async fn restore(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<BackQuery>,
) -> Result<Response, Failure> {
    set_status(app, id, q.back, Status::Active).await
}

/// `gza learnings promote`.
pub async fn promote(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<BackQuery>,
) -> Result<Response, Failure> {
    let ids = vec![id];
    let changes = act(&app, move |app, store| {
        crate::actions::promote_learnings(&app.project, store, &ids, || {})
    })
    .await?;
    let c = changes.into_iter().next().expect("one id, one change");
    let flash = if c.changed {
        Flash::Promoted(c.learning.id)
    } else {
        Flash::Unchanged(c.learning.id)
    };
    Ok(done(
        &back_to(q.back.as_deref(), &c.learning.label()),
        flash,
    ))
}
