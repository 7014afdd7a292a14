//! Frozen copy of tests/fixtures/sled/tree.rs for the report tests, which
//! annotate it at fixed line numbers: do not edit (not compiled).
//! path of any insert-heavy workload, as in the story this demo reproduces.
use std::cmp::Ordering;

const LEAF_CAPACITY: usize = 64;

struct Leaf<K, V> {
    entries: Vec<(K, V)>,
}

pub struct Tree<K, V> {
    leaves: Vec<Leaf<K, V>>,
    len: usize,
}

/// Compares a key against a leaf's lowest key; always inlined so that its
/// frames show up as inline frames of `view_for_key`.
#[inline(always)]
fn below_leaf<K: Ord>(key: &K, leaf_low: &K) -> bool {
    key.cmp(leaf_low) == Ordering::Less // LINE: below-leaf
}

impl<K: Ord + Clone, V: Clone> Tree<K, V> {
    pub fn new() -> Tree<K, V> {
        Tree { leaves: vec![Leaf { entries: Vec::new() }], len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Finds the index of the leaf responsible for `key`.
    #[inline(never)]
    fn view_for_key(&self, key: &K) -> usize {
        let mut index = 0;
        for (i, leaf) in self.leaves.iter().enumerate() {
            match leaf.entries.first() {
                Some((low, _)) if below_leaf(key, low) => break, // LINE: view-for-key-hot
                _ => index = i,
            }
        }
        index
    }

    /// Inserts `value` under `key`, returning the previous value.
    #[inline(never)]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let leaf_index = self.view_for_key(&key); // LINE: insert-calls-view
        let leaf = &mut self.leaves[leaf_index];
        match leaf.entries.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(pos) => Some(std::mem::replace(&mut leaf.entries[pos].1, value)),
            Err(pos) => {
                leaf.entries.insert(pos, (key, value));
                self.len += 1;
                if leaf.entries.len() > LEAF_CAPACITY {
                    let upper = leaf.entries.split_off(LEAF_CAPACITY / 2);
                    self.leaves.insert(leaf_index + 1, Leaf { entries: upper });
                }
                None
            }
        }
    }

    #[inline(never)]
    pub fn get(&self, key: &K) -> Option<V> {
        let leaf = &self.leaves[self.view_for_key(key)];
        match leaf.entries.binary_search_by(|(k, _)| k.cmp(key)) {
            Ok(pos) => Some(leaf.entries[pos].1.clone()),
            Err(_) => None,
        }
    }

    /// Drops everything, keeping one empty leaf.
    pub fn clear(&mut self) {
        self.leaves.truncate(1);
        self.leaves[0].entries.clear();
        self.len = 0;
    }
}
