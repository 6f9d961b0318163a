//! Grammar lookups resolved once per process instead of once per node.
//!
//! `Node::kind` finds the kind's C string and checks its length and UTF-8 on every call,
//! and `child_by_field_name` compares the name against every field name of the grammar.
//! The semantic passes ask both for almost every node, so each language keeps a table of
//! its kind names (indexed by kind id) and the ids of the fields it reads.
use crate::rules::ts_language;
use skillgate_core::Language;
use tree_sitter::Node;

/// The kind names of a grammar, indexed by kind id.
pub(crate) struct Kinds(Vec<&'static str>);

impl Kinds {
    pub(crate) fn load(lang: Language) -> Kinds {
        let l = ts_language(lang);
        Kinds(
            (0..l.node_kind_count())
                .map(|id| l.node_kind_for_id(id as u16).unwrap_or(""))
                .collect(),
        )
    }

    /// The node's kind, exactly as `Node::kind` names it.
    pub(crate) fn of(&self, node: Node<'_>) -> &'static str {
        match self.0.get(usize::from(node.kind_id())) {
            Some(k) => k,
            None => node.kind(),
        }
    }
}

/// A struct of field ids, filled from a grammar's field names (a field the grammar does
/// not have gets id 0, which no child carries: the lookup finds nothing, as by name).
macro_rules! field_ids {
    ($vis:vis struct $name:ident ($lang:expr) { $($field:ident),* $(,)? }) => {
        #[allow(non_snake_case)]
        $vis struct $name { $($vis $field: u16),* }

        impl $name {
            $vis fn load() -> $name {
                let l = $crate::rules::ts_language($lang);
                $name {
                    $($field: l
                        .field_id_for_name(stringify!($field))
                        .map_or(0, |id| id.get())),*
                }
            }
        }
    };
}
pub(crate) use field_ids;

#[cfg(test)]
mod tests {
    use super::*;

    field_ids!(struct Probe (Language::Python) { left, right, no_such_field });

    #[test]
    fn tables_agree_with_tree_sitter() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&ts_language(Language::Python))
            .expect("grammar");
        let tree = parser.parse("x = a + b\nf(y)[0]\n", None).expect("tree");
        let kinds = Kinds::load(Language::Python);
        let f = Probe::load();
        assert_eq!(f.no_such_field, 0);
        let mut cursor = tree.walk();
        let mut seen = 0;
        loop {
            let n = cursor.node();
            assert_eq!(kinds.of(n), n.kind());
            assert_eq!(n.child_by_field_id(f.left), n.child_by_field_name("left"));
            assert_eq!(n.child_by_field_id(f.right), n.child_by_field_name("right"));
            assert_eq!(n.child_by_field_id(f.no_such_field), None);
            seen += 1;
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    assert!(seen > 10);
                    return;
                }
            }
        }
    }
}
