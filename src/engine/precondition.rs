//! Which versions of a room an action may apply to: the engine's reading of `If-Match`.

/// `If-Match` as RFC 9110 defines it for a room: no header or `*` admits any version of an
/// existing room; a list of entity tags admits the versions whose strong tags are in it. Weak
/// tags and tags that name no version of ours never match (If-Match compares strongly), so an
/// empty list is a precondition that fails with `412`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Precondition {
    #[default]
    Any,
    OneOf(Vec<i64>),
}

impl Precondition {
    /// Only `version`.
    pub fn exactly(version: i64) -> Self {
        Precondition::OneOf(vec![version])
    }

    pub fn admits(&self, version: i64) -> bool {
        match self {
            Precondition::Any => true,
            Precondition::OneOf(versions) => versions.contains(&version),
        }
    }
}
