//! `--tag` filters, shared by the commands that list or run tasks.

use clap::Args;

use super::usage;
use crate::store::{Scope, Store};
use crate::task::Tag;

/// `--tag T` (repeatable) and `--all-tags`.
#[derive(Debug, Args, Default, Clone)]
pub struct TagFilter {
    /// Only tasks with this tag (repeat for any of several).
    #[arg(long = "tag", value_name = "TAG", value_parser = parse_tag)]
    pub tags: Vec<Tag>,
    /// With several --tag, only tasks that have all of them.
    #[arg(long, requires = "tags")]
    pub all_tags: bool,
}

impl TagFilter {
    /// The scope of `group` and these tags.
    pub fn scope<'a>(&'a self, group: Option<&'a str>) -> Scope<'a> {
        Scope {
            group,
            tags: &self.tags,
            all_tags: self.all_tags,
        }
    }

    /// Refuse a tag no task has (a typo would otherwise look like an empty list).
    pub fn require_known(&self, store: &Store) -> anyhow::Result<()> {
        for tag in &self.tags {
            if store.tag_exists(tag)? {
                continue;
            }
            let names: Vec<String> = store
                .tag_names(11)?
                .iter()
                .map(ToString::to_string)
                .collect();
            let known = match names.len() {
                0 => "no task has a tag yet (`gza add --tag NAME` or `gza edit ID --tag NAME` gives one)"
                    .to_string(),
                1..=10 => format!("tags in use: {}", names.join(", ")),
                _ => format!("tags in use: {}, …", names[..10].join(", ")),
            };
            return Err(usage(format!("no task has tag `{tag}`; {known}")));
        }
        Ok(())
    }
}

/// A tag on the command line.
pub(crate) fn parse_tag(text: &str) -> Result<Tag, String> {
    Tag::parse(text)
}

/// ` with tag a` / ` with tag a or b` / ` with tags a and b`, or nothing without tags: the end of
/// a sentence saying what a filtered list is empty of.
pub fn describe(filter: &TagFilter) -> String {
    let names: Vec<&str> = filter.tags.iter().map(Tag::as_str).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => format!(" with tag {one}"),
        many if filter.all_tags => format!(" with tags {}", many.join(" and ")),
        many => format!(" with tag {}", many.join(" or ")),
    }
}
