//! `gza lineage`: a task and its relatives as a tree: the task it descends from, and everything
//! based on that (reviews, improve tasks, retries), with where its branch was merged.

use std::collections::HashMap;
use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::{Context, output};
use crate::store::LineageNode;
use crate::task::{TaskId, TaskStatus, TaskType};

/// Most tasks drawn in one tree.
const MAX_NODES: u32 = 1_000;

#[derive(Debug, Args)]
pub struct LineageArgs {
    /// Any task of the tree.
    id: TaskId,
    /// Print JSON for scripts (the tree as nested `children`).
    #[arg(long)]
    json: bool,
}

/// A node as `--json` prints it.
#[derive(Serialize)]
struct NodeRecord<'a> {
    id: TaskId,
    task_type: TaskType,
    status: TaskStatus,
    review_verdict: Option<crate::task::ReviewVerdict>,
    failure_reason: Option<&'a crate::task::FailureReason>,
    depends_on: Option<TaskId>,
    prompt: String,
    branch: Option<&'a str>,
    merged_into: Option<&'a str>,
    #[serde(serialize_with = "crate::time::serialize_opt")]
    merged_at: Option<chrono::DateTime<chrono::Utc>>,
    pr_url: Option<&'a str>,
    children: Vec<NodeRecord<'a>>,
}

struct Tree<'a> {
    nodes: HashMap<TaskId, &'a LineageNode>,
    children: HashMap<TaskId, Vec<TaskId>>,
}

impl<'a> Tree<'a> {
    fn new(list: &'a [LineageNode]) -> Self {
        let mut children: HashMap<TaskId, Vec<TaskId>> = HashMap::new();
        for node in list {
            if let Some(parent) = node.based_on {
                children.entry(parent).or_default().push(node.task.id);
            }
        }
        Tree {
            nodes: list.iter().map(|n| (n.task.id, n)).collect(),
            children,
        }
    }

    fn kids(&self, id: TaskId) -> impl Iterator<Item = &'a LineageNode> + '_ {
        self.children
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|k| self.nodes.get(k).copied())
    }

    fn record(&self, node: &'a LineageNode) -> NodeRecord<'a> {
        let t = &node.task;
        NodeRecord {
            id: t.id,
            task_type: t.task_type,
            status: t.status(),
            review_verdict: t.state.review_verdict(),
            failure_reason: t.state.failure_reason(),
            depends_on: t.depends_on,
            prompt: crate::redact::redact_secrets(&t.prompt),
            branch: node.branch.as_deref(),
            merged_into: node.merged.as_ref().map(|m| m.into.as_str()),
            merged_at: node.merged.as_ref().map(|m| m.at),
            pr_url: node.pr_url.as_deref(),
            children: self.kids(t.id).map(|k| self.record(k)).collect(),
        }
    }
}

pub fn cmd_lineage(ctx: &Context, args: LineageArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open_for_reading()?;
    let root = store.lineage_root(args.id)?;
    let list = store.lineage(root, MAX_NODES + 1)?;
    let cut = list.len() > MAX_NODES as usize;
    let list = &list[..list.len().min(MAX_NODES as usize)];
    let tree = Tree::new(list);
    let mut out = output::stdout();
    let Some(top) = tree.nodes.get(&root).copied() else {
        return Ok(());
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &tree.record(top))?;
        writeln!(out)?;
        return Ok(());
    }
    let mut lines = Vec::new();
    draw(&tree, top, "", "", args.id, &mut lines);
    for line in lines {
        writeln!(out, "{line}")?;
    }
    if cut {
        writeln!(
            out,
            "{}",
            output::paint(
                output::DIM,
                format!("… the tree has more than {MAX_NODES} tasks; the rest are not shown")
            )
        )?;
    }
    Ok(())
}

/// The lines of `node` and what hangs under it: `first` prefixes its own line, `rest` the lines
/// under it.
fn draw(
    tree: &Tree,
    node: &LineageNode,
    first: &str,
    rest: &str,
    asked: TaskId,
    lines: &mut Vec<String>,
) {
    lines.push(format!("{first}{}", node_line(node, asked, first)));
    let kids: Vec<&LineageNode> = tree.kids(node.task.id).collect();
    // The branch's fate (merged, a pull request) hangs under the task that made the branch, last.
    let mut ends = Vec::new();
    if node.task.task_type == TaskType::Implement {
        if let Some(url) = &node.pr_url {
            ends.push(format!("pull request {url}"));
        }
        if let Some(m) = &node.merged {
            ends.push(output::paint(
                output::GREEN,
                format!(
                    "merged into {} {}",
                    m.into,
                    output::short_time(&crate::time::to_db(&m.at))
                ),
            ));
        }
    }
    let total = kids.len() + ends.len();
    for (i, kid) in kids.iter().enumerate() {
        let last = i + 1 == total;
        let (here, below) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        draw(
            tree,
            kid,
            &format!("{rest}{here}"),
            &format!("{rest}{below}"),
            asked,
            lines,
        );
    }
    for (i, end) in ends.iter().enumerate() {
        let last = kids.len() + i + 1 == total;
        lines.push(format!("{rest}{}{end}", if last { "└─ " } else { "├─ " }));
    }
}

/// One task: id, type, status (with a verdict or failure reason), what it is for, its prompt.
fn node_line(node: &LineageNode, asked: TaskId, prefix: &str) -> String {
    let t = &node.task;
    let status = match (t.state.failure_reason(), t.state.review_verdict()) {
        (Some(reason), _) if t.status() == TaskStatus::Failed => format!("failed ({reason})"),
        (_, Some(verdict)) => format!("{} ({verdict})", t.status()),
        _ => t.status().to_string(),
    };
    let mut head = format!(
        "{}  {}  {}",
        output::paint(output::BOLD, format!("Task {}", t.id)),
        t.task_type,
        output::paint(output::status_style(t.status()), status)
    );
    if t.task_type == TaskType::Improve
        && let Some(review) = t.depends_on
    {
        head.push_str(&format!("  for review {review}"));
    }
    if t.id == asked {
        head.push_str(&output::paint(output::CYAN, "  ◀"));
    }
    let used = crate::text::display_width(prefix) + crate::text::display_width(&head) + 2;
    let room = output::width().saturating_sub(used);
    if room < 10 {
        return head;
    }
    format!(
        "{head}  {}",
        output::paint(
            output::DIM,
            output::one_line(&crate::redact::redact_secrets(&t.prompt), room)
        )
    )
}
