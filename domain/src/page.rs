//! A long chat is read a page at a time: its last items, every card still waiting or running, and
//! the turns they belong to (docs/performance-notes.md, "Pages of a view"). A page is a [`ConversationView`]
//! whose `earlier` says where the left-out items end; the same fold applies live events to it, and
//! `page(apply(page(v), tail)) == page(apply(v, tail))` (domain/tests/fold_props.rs), which is what lets
//! the server keep a page as its snapshot and read a reload in O(page), not O(history).

use serde::{Deserialize, Serialize};

use super::{
    fold::{ConversationView, Item, TaskView},
    ids::TaskId,
};

/// Items a page holds when nothing else is configured.
pub const DEFAULT_PAGE_ITEMS: usize = 50;

/// Items before a page (`GET /api/conversations/{id}/items?before=`), with the turns they belong to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EarlierItems {
    pub items: Vec<Item>,
    pub tasks: Vec<TaskView>,
    /// There are items before these too: ask again with `before` set to this.
    pub earlier: Option<i64>,
}

impl Item {
    /// Sequence number of the event that made the item: its place in the chat.
    pub fn seq(&self) -> i64 {
        match self {
            Item::User { seq, .. } | Item::Assistant { seq, .. } => *seq,
            Item::Card(card) => card.seq,
        }
    }

    pub fn task_id(&self) -> &TaskId {
        match self {
            Item::User { task_id, .. } | Item::Assistant { task_id, .. } => task_id,
            Item::Card(card) => &card.task_id,
        }
    }

    /// Later events may still change it: a call without its result (waiting, approved, running, or
    /// refused and not yet answered). A page never leaves such an item out.
    fn is_live(&self) -> bool {
        matches!(self, Item::Card(card) if card.result.is_none())
    }
}

impl ConversationView {
    /// The page of this view: its last `items` items, every live item before them, and the turns
    /// those items belong to and every unfinished turn. Grants and usage stay whole.
    pub fn page(&self, items: usize) -> ConversationView {
        let items = items.max(1);
        let window = self.items.len().saturating_sub(items);
        if window == 0 && self.earlier.is_none() {
            return self.clone();
        }
        let kept: Vec<Item> =
            self.items.iter().enumerate().filter(|(i, item)| *i >= window || item.is_live()).map(|(_, item)| item.clone()).collect();
        let earlier = self.items.get(window).map(Item::seq).or(self.earlier);
        ConversationView { items: kept, tasks: self.tasks_of(&self.items[window..]), earlier, ..self.clone() }
    }

    /// The items before `before` (at most `limit`, the latest of them), for "Show earlier".
    pub fn earlier_items(&self, before: i64, limit: usize) -> EarlierItems {
        let older: Vec<&Item> = self.items.iter().filter(|item| item.seq() < before).collect();
        let from = older.len().saturating_sub(limit.max(1));
        let items: Vec<Item> = older[from..].iter().map(|item| (*item).clone()).collect();
        let tasks = self.tasks.iter().filter(|t| items.iter().any(|i| i.task_id() == &t.task_id)).cloned().collect();
        EarlierItems { earlier: (from > 0).then(|| items[0].seq()), items, tasks }
    }

    /// Puts earlier items (from [`ConversationView::earlier_items`]) before this page's, skipping
    /// any it already shows (its live cards), and adds their turns.
    pub fn prepend(&mut self, earlier: EarlierItems) {
        let shown: std::collections::HashSet<i64> = self.items.iter().map(Item::seq).collect();
        let mut items: Vec<Item> = earlier.items.into_iter().filter(|item| !shown.contains(&item.seq())).collect();
        items.append(&mut self.items);
        items.sort_by_key(Item::seq);
        self.items = items;
        let mut tasks: Vec<TaskView> = earlier.tasks.into_iter().filter(|t| self.task(&t.task_id).is_none()).collect();
        tasks.append(&mut self.tasks);
        self.tasks = tasks;
        self.earlier = earlier.earlier;
    }

    /// Tasks in their order that an item of `window` or a live item belongs to, and unfinished ones
    /// (the latest turn decides whether the composer is usable: unfinished, it is here; finished,
    /// any finished turn says the same).
    fn tasks_of(&self, window: &[Item]) -> Vec<TaskView> {
        self.tasks
            .iter()
            .filter(|t| {
                !t.status.is_final() || window.iter().chain(self.items.iter().filter(|i| i.is_live())).any(|i| i.task_id() == &t.task_id)
            })
            .cloned()
            .collect()
    }
}
